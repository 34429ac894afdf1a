"""Denial of service: every size a user controls is bounded before any work, so a refusal costs kilobytes."""

from __future__ import annotations

import json

import pytest
from hardening_support import PEAK_BOUND, bundled_config, measure

from hybridplan.errors import BadInput
from hybridplan.limits import MAX_CONTEXT, MAX_LAYERS, MAX_LIST, MAX_PARALLEL, MAX_POOL_TOKENS, MAX_REQUESTS

MODEL = ["--model-path", "Qwen/Qwen3.8-27B"]


@pytest.mark.parametrize("flags,field", [
    (["--pp-size", "100000"], "--pp-size"),
    (["--tp-size", str(MAX_PARALLEL + 1)], "--tp-size"),
    (["--dp-size", "1000000"], "--dp-size"),
    (["--ep-size", "99999"], "--ep-size"),
    (["--chunked-prefill-size", "99999999999999"], "--chunked-prefill-size"),
    (["--cuda-graph-bs-decode", *map(str, range(1, MAX_LIST + 2))], "--cuda-graph-bs-decode"),
    (["--cuda-graph-bs-prefill", "4", str(MAX_CONTEXT + 1)], "--cuda-graph-bs-prefill"),
    (["--cuda-graph-max-bs-prefill", "1000000000"], "--cuda-graph-max-bs-prefill"),
    (["--max-running-requests", str(MAX_REQUESTS + 1)], "--max-running-requests"),
    (["--max-mamba-cache-size", "10000000000"], "--max-mamba-cache-size"),
    (["--context-length", str(MAX_CONTEXT + 1)], "--context-length"),
    (["--context-length", "1T"], "--context-length"),
    (["--max-total-tokens", str(MAX_POOL_TOKENS + 1)], "--max-total-tokens"),
    (["--speculative-num-draft-tokens", "100000"], "--speculative-num-draft-tokens"),
    (["--port", str(1 << 64)], "--port"),
])
def test_oversized_flag_is_refused_naming_it(refused, flags, field):
    err = refused(["explain", "--pool-budget-gib", "60", "--", *MODEL, *flags], field)
    assert "outside" in err or "values, over the bound" in err


def test_oversized_flag_costs_little_memory():
    from hybridplan.engine.sglang.serving.explain import explain

    for flags in (["--pp-size", "100000"], ["--chunked-prefill-size", "99999999999999"],
                  ["--cuda-graph-bs-decode", *map(str, range(1, 5000))]):
        peak, raised = measure(lambda: explain(" ".join(["--model-path", "Qwen/Qwen3.8-27B", *flags]), budget=60.0))
        assert isinstance(raised, BadInput) and peak < PEAK_BOUND, (flags, peak, raised)


def test_more_pipeline_stages_than_layers_is_the_engines_refusal(cli_json):
    # utils/common.py::make_layers asserts num_hidden_layers >= pp_size; Qwen3.8-27B has 64 layers
    code, out = cli_json("explain", "--json", "--pool-budget-gib", "60", "--", *MODEL, "--pp-size", "1024")
    assert code == 3 and out["error"]["rule"] == "utils/common.py::make_layers"
    assert "pp_size=1024, num_hidden_layers=64" in out["error"]["message"]


def test_pipeline_stages_up_to_the_layer_count_are_sized():
    from hybridplan.engine.sglang.serving.explain import explain

    peak, raised = measure(lambda: explain("--model-path Qwen/Qwen3.8-27B --pp-size 64", budget=60.0))
    assert raised is None and peak < PEAK_BOUND


def _config_dir(tmp_path, **text_fields):
    cfg = bundled_config()
    cfg["text_config"].update(text_fields)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    return str(tmp_path)


def test_billion_layer_config_is_refused_before_any_layer_list(refused, tmp_path):
    path = _config_dir(tmp_path, num_hidden_layers=1_000_000_000)
    err = refused(["explain", "--", "--model-path", path], "text_config.num_hidden_layers")
    assert str(MAX_LAYERS) in err
    from hybridplan.models.loader import load_model

    peak, raised = measure(lambda: load_model(path))
    assert isinstance(raised, BadInput) and peak < PEAK_BOUND


@pytest.mark.parametrize("fields,field", [
    ({"num_attention_heads": 10**9}, "text_config.num_attention_heads"),
    ({"linear_num_value_heads": 70000}, "text_config.linear_num_value_heads"),
    ({"layer_types": ["linear_attention"] * (MAX_LAYERS + 1)}, "text_config.layer_types"),
    ({"max_position_embeddings": 1 << 40}, "text_config.max_position_embeddings"),
    ({"rope_parameters": {"factor": 1e9}}, "text_config.rope_parameters.factor"),
])
def test_oversized_config_fields_are_refused(refused, tmp_path, fields, field):
    refused(["explain", "--", "--model-path", _config_dir(tmp_path, **fields)], field)


def test_long_command_is_refused_before_splitting(refused):
    refused(["explain", "--", "--model-path x " + "--tp 1 " * 400_000], "ARG_MAX")


def test_many_unknown_arguments_give_a_short_message():
    from hybridplan.engine.sglang.serving.loading import load

    with pytest.raises(BadInput) as exc:
        load("--model-path Qwen/Qwen3.8-27B " + "--zz " * 50_000)
    assert len(exc.value.message) < 500 and "49,990 more" in exc.value.message


def test_within_bounds_the_engines_own_refusal_still_speaks(cli_json):
    code, out = cli_json("explain", "--json", "--", *MODEL, "--tp-size", "1024")
    assert code == 3 and "is not divisible by 1024" in out["error"]["message"]
