"""Recovering conditions and item lists from values over a selection space: exact on every cared point."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from hybridplan.cookbook.docs.recover import Space, condition, expand, holds, items

SPACE = Space(dims=("hw", "quant", "spec"), options=(("h200", "rtx5090", "b200"),
                                                     ("bf16", "nvfp4-a", "nvfp4-b"), ("none", "eagle")))
POINTS = SPACE.points()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([True, False, None]), min_size=len(POINTS), max_size=len(POINTS)))
def test_condition_agrees_on_every_cared_point(bits):
    truth = {p: b for p, b in zip(POINTS, bits) if b is not None}
    cond = condition(SPACE, truth)
    assert all(holds(SPACE, cond, p) == b for p, b in truth.items())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["--a", "--b 1", "--b 2", "--c"]), max_size=4),
                min_size=len(POINTS), max_size=len(POINTS)))
def test_items_expand_to_every_value(values):
    table = dict(zip(POINTS, values))
    its = items(SPACE, table)
    assert all(expand(SPACE, its, p) == v for p, v in table.items())


def test_docs_style_predicates_come_back_small():
    rtx_not_fp4 = {p: SPACE.selection(p)["hw"] == "rtx5090" and not SPACE.selection(p)["quant"].startswith("nvfp4")
                   for p in POINTS}
    assert condition(SPACE, rtx_not_fp4) == {"equals": {"hw": "rtx5090", "quant": "bf16"}}
    fp4 = {p: SPACE.selection(p)["quant"].startswith("nvfp4") for p in POINTS}
    assert condition(SPACE, fp4) == {"prefix": {"quant": "nvfp4"}}
    flags = {p: ["--x"] + (["--y"] if SPACE.selection(p)["hw"] == "b200" else ["--z"]) for p in POINTS}
    got = items(SPACE, flags)  # one if/else on hw, whichever branch the supersequence meets first
    assert got in (["--x", {"when": {"equals": {"hw": "b200"}}, "then": ["--y"], "else": ["--z"]}],
                   ["--x", {"when": {"in": {"hw": ["h200", "rtx5090"]}}, "then": ["--z"], "else": ["--y"]}])
