"""The CLI's pydantic-free coercion (hybridplan.commands.coercion) gives what typer's own adapter gives, value and
type, for every value it takes; anything else, and every error message, stays typer's."""

from __future__ import annotations

import math
from typing import Any, List

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer._adapters import build_adapter
from typer.models import OptionInfo

from hybridplan.commands.coercion import DECLINED, plain

ANNOTATIONS = (str, bool, int, float, List[str])
NUMBERISH = st.text(alphabet="0123456789-+._eE inf", max_size=40)


def _typer(annotation: Any, value: Any) -> Any:
    return build_adapter(annotation, OptionInfo()).validate_python(value)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return repr(a) == repr(b) or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


@given(value=st.one_of(NUMBERISH, st.text(max_size=40), st.integers(), st.floats(), st.booleans()))
def test_plain_values_come_out_as_typer_gives_them(value):
    for annotation in (str, bool, int, float):
        got = plain(annotation, value)
        if got is not DECLINED:
            assert _same(got, _typer(annotation, value)), (annotation, value, got)


@given(value=st.lists(st.text(max_size=12), max_size=5).map(tuple))
def test_a_launch_command_comes_out_as_typer_gives_it(value):
    got = plain(List[str], value)
    assert got is not DECLINED and _same(got, _typer(List[str], value)) and type(got) is list


@pytest.mark.parametrize("annotation,value,expected", [
    (float, "66.5", 66.5), (float, "-7.96", -7.96), (float, "80", 80.0), (int, "8192", 8192), (int, "-0", 0),
    (str, "h200", "h200"), (bool, True, True),
])
def test_the_usual_spellings_need_no_adapter(annotation, value, expected):
    assert _same(plain(annotation, value), expected)


@pytest.mark.parametrize("annotation,value", [
    (float, "1e3"), (float, " 5"), (float, "1_000"), (float, "nan"), (float, "abc"), (int, "66.5"), (int, "+3"),
    (int, "9" * 19), (str, b"bytes"), (bool, "yes"), (float, 1),
])
def test_other_spellings_are_left_to_typer(annotation, value):
    assert plain(annotation, value) is DECLINED


def test_a_bad_number_is_still_typers_message(cli):
    code, _, err = cli("explain", "--pool-budget-gib", "abc", "--", "--model-path", "Qwen/Qwen3.8-27B")
    assert code == 2
    assert err == ("error: root explain: Invalid value for '--pool-budget-gib': Input should be a valid number, "
                   "unable to parse string as a number\n")
