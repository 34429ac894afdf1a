"""The condition language: data forms, evaluation, references and the laws negation and composition obey."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from hybridplan.cookbook.conditions import Condition, describe, evaluate, refs

COND = TypeAdapter(Condition)
DIMS = {"hw": ["h200", "rtx5090", "gb300"], "quant": ["fp8", "nvfp4-bf16-head", "nvfp4-fp4-head"]}


def parse(raw):
    return COND.validate_python(raw)


def test_forms_evaluate_against_a_selection():
    sel = {"hw": "rtx5090", "quant": "fp8"}
    assert evaluate(parse({"equals": {"hw": "rtx5090"}}), sel)
    assert not evaluate(parse({"equals": {"hw": "rtx5090", "quant": "bf16"}}), sel)
    assert evaluate(parse({"in": {"quant": ["bf16", "fp8"]}}), sel)
    assert evaluate(parse({"prefix": {"quant": "fp"}}), sel)
    assert not evaluate(parse({"prefix": {"quant": "nvfp4"}}), sel)
    # the Qwen3.8-27B RTX 5090 predicate: hw = rtx5090 and quant is not NVFP4
    rtx_not_nvfp4 = parse({"all": [{"equals": {"hw": "rtx5090"}}, {"not": {"prefix": {"quant": "nvfp4"}}}]})
    assert evaluate(rtx_not_nvfp4, sel)
    assert not evaluate(rtx_not_nvfp4, {"hw": "rtx5090", "quant": "nvfp4-fp4-head"})
    assert evaluate(parse(True), sel) and not evaluate(parse(False), sel)
    assert evaluate(parse({"all": []}), sel) and not evaluate(parse({"any": []}), sel)


def test_a_missing_dim_never_matches():
    assert not evaluate(parse({"equals": {"spec": "none"}}), {"hw": "h200"})
    assert not evaluate(parse({"in": {"spec": ["none", "eagle"]}}), {"hw": "h200"})


@pytest.mark.parametrize("raw", [
    {"equal": {"hw": "h200"}},  # unknown key
    {"equals": {"hw": "h200"}, "not": True},  # two keys
    {"in": {"hw": "h200"}},  # not a list
    "hw == 'h200'",  # code is not a condition
    {"equals": {}},  # nothing to compare
])
def test_malformed_conditions_are_rejected(raw):
    with pytest.raises(ValidationError):
        parse(raw)


def test_refs_name_every_option_and_prefix():
    cond = parse({"any": [{"in": {"hw": ["h200", "gb300"]}}, {"not": {"prefix": {"quant": "nvfp4"}}}]})
    assert sorted(refs(cond)) == [("id", "hw", "gb300"), ("id", "hw", "h200"), ("prefix", "quant", "nvfp4")]


def test_describe_reads_like_the_rule():
    cond = parse({"all": [{"equals": {"hw": "rtx5090"}}, {"not": {"prefix": {"quant": "nvfp4"}}}]})
    assert describe(cond) == "hw = rtx5090 and not (quant starts with 'nvfp4')"


# ---------------------------------------------------------------------------------------------- laws

atoms = st.one_of(
    st.builds(lambda d, v: {"equals": {d: v}}, st.sampled_from(list(DIMS)), st.sampled_from(sum(DIMS.values(), []))),
    st.builds(lambda d, vs: {"in": {d: vs}}, st.sampled_from(list(DIMS)),
              st.lists(st.sampled_from(sum(DIMS.values(), [])), min_size=1, max_size=3)),
    st.builds(lambda d, p: {"prefix": {d: p}}, st.sampled_from(list(DIMS)), st.sampled_from(["h", "nvfp4", "fp", "x"])),
    st.booleans(),
)
conds = st.recursive(atoms, lambda c: st.one_of(
    st.builds(lambda x: {"not": x}, c),
    st.builds(lambda xs: {"all": xs}, st.lists(c, max_size=3)),
    st.builds(lambda xs: {"any": xs}, st.lists(c, max_size=3)),
), max_leaves=8)
sels = st.fixed_dictionaries({d: st.sampled_from(vs) for d, vs in DIMS.items()})


@given(conds, conds, sels)
def test_de_morgan_and_double_negation(a, b, sel):
    lhs = parse({"not": {"all": [a, b]}})
    rhs = parse({"any": [{"not": a}, {"not": b}]})
    assert evaluate(lhs, sel) == evaluate(rhs, sel)
    assert evaluate(parse({"not": {"not": a}}), sel) == evaluate(parse(a), sel)


@given(conds)
def test_conditions_round_trip_as_data(raw):
    cond = parse(raw)
    dumped = COND.dump_python(cond, by_alias=True)
    assert parse(dumped) == cond
