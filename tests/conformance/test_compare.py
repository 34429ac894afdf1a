"""The comparison itself (no engine needed): scenarios are reproducible, every drift names its rule."""

from __future__ import annotations

from hybridplan.conformance.compare import compare, known
from hybridplan.conformance.fixtures import materialize
from hybridplan.conformance.scenarios import generate


def test_scenarios_are_reproducible_and_cover_every_bundled_target(tmp_path):
    models = materialize(tmp_path)
    a = generate(models, 120, seed=3)
    b = generate(models, 120, seed=3)
    assert a == b
    assert generate(models, 120, seed=4) != a
    targets = {k for k, m in models.items() if not m.is_draft}
    assert {s.model for s in generate(models, len(targets), seed=0)} == targets


def test_a_drifted_field_names_the_hybridplan_rule():
    engine = {"id": "x", "sizing": {"S": 5, "K": 218, "max_total_num_tokens": 575225}}
    model = {"id": "x", "sizing": {"S": 5, "K": 219, "max_total_num_tokens": 575225}}
    [drift] = compare(engine, model)
    assert drift.field == "sizing.K" and drift.engine == 218 and drift.hybridplan == 219
    assert drift.rule.endswith("sizing.handle_max_mamba_cache")


def test_refusals_compare_type_and_message():
    err = {"stage": "sizing", "type": "RuntimeError", "message": "Not enough GPU memory"}
    assert compare({"id": "x", "error": err}, {"id": "x", "error": {**err, "rule": "r"}}) == []
    [drift] = compare({"id": "x", "error": err}, {"id": "x"})
    assert drift.field == "error"
    [drift] = compare({"id": "x", "error": err}, {"id": "x", "error": {**err, "message": "other", "rule": "r"}})
    assert drift.rule == "r"


def test_only_the_listed_engine_crash_is_set_aside():
    crash = {"error": {"stage": "resolve", "type": "AttributeError",
                       "message": "'NemotronHConfig' object has no attribute 'quantization_config'"}}
    assert known(crash) is not None
    assert known({"error": {"stage": "resolve", "type": "ValueError", "message": "x"}}) is None


def test_check_engine_without_sglang_exits_2(cli):
    code, out, err = cli("check-engine", "--scenarios", "2")
    assert code == 2
    assert "no usable sglang" in err or "did not run the oracle" in err
