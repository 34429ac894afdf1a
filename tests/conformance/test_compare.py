"""The comparison itself on SGLang answers (no engine needed): scenarios are reproducible, every drift names its rule."""

from __future__ import annotations

from hybridplan.conformance.compare import compare as compare_with
from hybridplan.conformance.oracle import oracle
from hybridplan.conformance.sglang.fixtures import materialize
from hybridplan.conformance.sglang.scenarios import GPUS, GRID_MODELS, default_fraction_grid, generate


def compare(engine, model):
    return compare_with(engine, model, oracle("sglang").comparison)


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


def test_an_engine_crash_is_compared_with_hybridplans_refusal():
    # nothing is set aside: the Nemotron-3.5-Lightning crash must be mirrored as a refusal with the same message
    crash = {"stage": "resolve", "type": "AttributeError",
             "message": "'NemotronHConfig' object has no attribute 'quantization_config'"}
    refusal = {**crash, "rule": "arg_groups/model_overrides/nemotron_h.py::_nemotron_h_overrides"}
    assert compare({"id": "x", "error": crash}, {"id": "x", "error": refusal}) == []
    [drift] = compare({"id": "x", "error": crash}, {"id": "x", "resolved": {}})
    assert drift.field == "error"


def test_a_default_mem_fraction_drift_fails_like_any_other():
    engine = {"id": "x", "resolved": {"mem_fraction_static": 0.8114781249999999}}
    [drift] = compare(engine, {"id": "x", "resolved": {"mem_fraction_static": 0.865}})
    assert drift.rule.endswith("memory_defaults.apply_memory_defaults")
    [drift] = compare(engine, {"id": "x", "resolved": {"mem_fraction_static": None}})
    assert drift.hybridplan is None


def test_the_grid_defaults_the_fraction_on_every_gpu_with_and_without_attention_dp(tmp_path):
    models = materialize(tmp_path)
    grid = default_fraction_grid(models)
    assert len(grid) == len(GRID_MODELS) * len(GPUS) * 2 == len({sc.id for sc in grid})
    assert all("--mem-fraction-static" not in sc.argv and "mfs:default" in sc.tags for sc in grid)
    assert {sc.gpu_mib for sc in grid} == {mib for mib, _ in GPUS}
    assert {("attn_dp" in sc.tags, "vlm" in sc.tags) for sc in grid} == {(a, b) for a in (0, 1) for b in (0, 1)}
    assert all(sc.payload()["gpu_mib"] == sc.gpu_mib for sc in grid)


def test_sampled_scenarios_vary_the_gpu_and_leave_some_fractions_to_the_engine(tmp_path):
    sample = generate(materialize(tmp_path), 300, seed=0)
    assert {sc.gpu_mib for sc in sample} == {mib for mib, _ in GPUS}
    defaulted = [sc for sc in sample if "mfs:default" in sc.tags]
    assert all("--mem-fraction-static" not in sc.argv for sc in defaulted)
    assert any("attn_dp" in sc.tags for sc in defaulted) and any(sc.available_gib for sc in defaulted)


def test_check_engine_without_sglang_exits_2(cli):
    code, out, err = cli("check-engine", "--scenarios", "2")
    assert code == 2
    assert "no usable sglang" in err or "did not run the oracle" in err


def test_vllm_compares_the_parse_first_then_every_field_and_a_refusal_by_type_and_message():
    how = oracle("vllm").comparison
    engine = {"id": "s1", "parsed": {"model": "m", "block_size": 16}, "block_size": 784, "num_blocks": 10}
    [drift] = compare_with(engine, {"id": "s1", "parsed": {"model": "m"}, "block_size": 800, "num_blocks": 9}, how)
    assert (drift.field, drift.rule) == ("parsed", "hybridplan.engine.vllm.command.parse_command")
    drifts = compare_with(engine, {"id": "s1", "parsed": engine["parsed"], "block_size": 800, "num_blocks": 9}, how)
    assert [(d.field, d.engine, d.hybridplan, d.rule.rsplit(".", 1)[-1]) for d in drifts] == [
        ("block_size", 784, 800, "hybrid_block_size"), ("num_blocks", 10, 9, "plan (available // bytes per block)")]
    refused = {"id": "s1", "parsed": engine["parsed"], "error": {"type": "ValueError", "message": "too small"}}
    ours = {**refused, "error": {**refused["error"], "rule": "v1/core/kv_cache_planning.py::_auto_fit_max_model_len"}}
    assert compare_with(refused, ours, how) == []
    [drift] = compare_with(refused, {**ours, "error": {**ours["error"], "message": "other"}}, how)
    assert drift.rule == "v1/core/kv_cache_planning.py::_auto_fit_max_model_len"
    [drift] = compare_with(refused, {"id": "s1", "parsed": engine["parsed"], "block_size": 784}, how)
    assert (drift.field, drift.hybridplan, drift.rule) == ("error", None, "(the refusal)")


def test_the_vllm_parser_compares_a_reading_a_refusal_and_each_flag():
    """A parse by its values, argparse's refusal by its message, an exception the release raises by its type (where
    hybridplan refuses in one line), and the release's flags by option set and each flag's parsing fields."""
    from hybridplan.conformance.vllm.parser import MODEL, expected

    how = oracle("vllm-parser").comparison
    [drift] = compare_with({"id": "a", "parsed": {"enforce_eager": True}}, {"id": "a", "parsed": {}}, how)
    assert (drift.field, drift.rule.rsplit(".", 1)[-1]) == ("parsed", "parse_command")
    refused = {"id": "a", "error": {"type": "argparse", "message": "unrecognized arguments: --x"}}
    assert compare_with(refused, refused, how) == []
    [drift] = compare_with(refused, {"id": "a", "error": {"type": "argparse", "message": "other"}}, how)
    assert drift.field == "error"
    raised = {"id": "b", "error": {"type": "IndexError", "message": "list index out of range"}}
    assert compare_with(raised, {"id": "b", **expected("0.34.0", (MODEL, "-cc.mode"))}, how) == []
    assert len(compare_with(raised, {"id": "b", **expected("0.34.0", (MODEL, "--no-such-flag"))}, how)) == 1
    nan = (MODEL, "-sc.num_speculative_tokens", "1e999")
    assert expected("0.34.0", nan) == {}  # hybridplan refuses it by name: only that the release takes it compares
    assert compare_with({"id": "c", "parsed": {"speculative_config": {}}}, {"id": "c"}, how) == []
    assert len(compare_with({"id": "c", "error": refused["error"]}, {"id": "c"}, how)) == 1

    flag = {"dest": "max_model_len", "options": ["--max-model-len"], "kind": "value", "nargs": None,
            "type": "vllm_human_readable_int_or_auto", "choices": None, "default": None, "const": None,
            "deprecated": None, "required": False, "help": "Model context length.", "aliases": [], "negatives": []}
    seed = {**flag, "dest": "seed", "options": ["--seed"], "type": "int", "default": 0}
    engine = {"id": "flags", "allow_abbrev": True, "flags": [flag, seed]}
    mine = {**engine, "flags": [{**flag, "type": "human_readable_int_or_auto", "help": "other"}, seed]}
    assert compare_with(engine, mine, how) == []  # vLLM's own type names as hybridplan's; help aside
    [drift] = compare_with(engine, {**mine, "flags": mine["flags"][:1]}, how)
    assert (drift.field, drift.rule.rsplit(".", 1)[-1]) == ("flags", "registry")
    [drift] = compare_with(engine, {**mine, "flags": [mine["flags"][0], {**seed, "default": 1}]}, how)
    assert drift.field == "flags.seed --seed" and (drift.engine[3], drift.hybridplan[3]) == (0, 1)
