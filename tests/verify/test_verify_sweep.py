"""`--sweep`: ranges in decimal steps, lists, and the flags they may name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hybridplan.errors import BadInput
from hybridplan.verify.sweep import Sweep, combinations, label, parse_sweep

FLAGS = {"--mem-fraction-static", "--chunked-prefill-size"}


def test_inclusive_decimal_range():
    s = parse_sweep("mem-fraction-static=0.84:0.96:0.01", FLAGS)
    assert s.flag == "--mem-fraction-static"
    assert s.values == tuple(f"0.{v}" for v in range(84, 97))


def test_list_and_integer_range():
    assert parse_sweep("--chunked-prefill-size=1024,2048", FLAGS).values == ("1024", "2048")
    assert parse_sweep("chunked-prefill-size=1024:4096:1024", FLAGS).values == ("1024", "2048", "3072", "4096")


@pytest.mark.parametrize("spec, message", [
    ("mem-fraction-static", "takes FLAG="), ("mem-fraction-static=0.9:0.8:0.01", "START <= STOP"),
    ("mem-fraction-static=0.8:0.9:0", "positive STEP"), ("mem-fraction-static=a:b:c", "must be numbers"),
    ("colour=1,2", "not a flag"), ("mem-fraction-static=0:1000:0.0001", "at most"),
])
def test_bad_sweeps(spec, message):
    with pytest.raises(BadInput, match=message):
        parse_sweep(spec, FLAGS)


@given(start=st.integers(0, 900), count=st.integers(1, 60), step=st.sampled_from(["0.01", "0.005", "1", "0.25"]))
def test_ranges_hit_their_end_exactly(start, count, step):
    from decimal import Decimal

    lo = Decimal(start) * Decimal(step)
    hi = lo + (count - 1) * Decimal(step)
    s = parse_sweep(f"mem-fraction-static={lo}:{hi}:{step}", FLAGS)
    assert len(s.values) == count and Decimal(s.values[-1]) == hi and Decimal(s.values[0]) == lo


def test_combinations_and_labels():
    a = Sweep(flag="--mem-fraction-static", values=("0.85", "0.9"))
    b = Sweep(flag="--chunked-prefill-size", values=("1024",))
    combos = combinations([a, b])
    assert combos == [(("--mem-fraction-static", "0.85"), ("--chunked-prefill-size", "1024")),
                      (("--mem-fraction-static", "0.9"), ("--chunked-prefill-size", "1024"))]
    assert label(combos[0]) == "mem-fraction-static=0.85 chunked-prefill-size=1024"
    assert combinations([]) == [()] and label(()) == ""
