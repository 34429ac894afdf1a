"""GPU-memory defaults of sglang 0.5.23 (memory_hook.py): tiers, graph reserve, the default mem fraction, VLM factor,
post-capture mode and the pre-capture activation reserve. Worked values: engine-semantics.md §4.1 and §4.4."""

from __future__ import annotations

import pytest

from hybridplan.engine.sglang.cuda_graph import prefill_batch_sizes
from hybridplan.engine.sglang.memory_defaults import vlm_factor
from hybridplan.engine.sglang.reserves import pre_capture_activation_reserve_mb, pre_capture_reserve_gib
from hybridplan.hardware.catalog import lookup
from tests.conftest import resolve_cmd

QNEXT = "python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Thinking"


def on(gpu: str, flags: str = "", model: str = QNEXT, env: str = ""):
    args, geo, _ = resolve_cmd(f"{env} {model} {flags}".strip(), platform=lookup(gpu).platform())
    return args


@pytest.mark.parametrize("gpu,tp1,tp4,tp8,no_prefill_graph", [
    ("h100-80gb", 0.830, 0.819, 0.812, 0.835),
    ("h200", 0.903, 0.897, 0.893, 0.907),
    ("b200", 0.854, 0.852, 0.849, 0.857),
])
def test_default_mem_fraction_table(gpu, tp1, tp4, tp8, no_prefill_graph):
    assert on(gpu)["mem_fraction_static"] == tp1
    assert on(gpu, "--tp 4")["mem_fraction_static"] == tp4
    assert on(gpu, "--tp 8")["mem_fraction_static"] == tp8
    assert on(gpu, "--disable-prefill-cuda-graph")["mem_fraction_static"] == no_prefill_graph
    assert on(gpu).arg("mem_fraction_static").source.value == "default"


def test_explicit_fraction_wins_and_no_gpu_leaves_it_open():
    assert on("h200", "--mem-fraction-static 0.7")["mem_fraction_static"] == 0.7
    args, _, _ = resolve_cmd(QNEXT)
    assert args["mem_fraction_static"] is None and args["chunked_prefill_size"] == 4096


@pytest.mark.parametrize("gpu,chunk,max_bs,buckets", [("rtx5090", 4096, 48, 50), ("h100", 8192, 256, 58),
                                                      ("b200", 16384, 512, 74), ("l40s", 4096, 32, 50)])
def test_tiers_and_prefill_buckets(gpu, chunk, max_bs, buckets):
    a = on(gpu)
    assert a["chunked_prefill_size"] == chunk and a["cuda_graph_decode_max_bs"] == max_bs
    assert len(a["cuda_graph_prefill_bs"]) == buckets and a["cuda_graph_prefill_bs"][-1] == chunk


def test_typed_mrr_caps_the_decode_graph_but_the_spec_default_does_not():
    assert on("rtx5090", "--max-running-requests 1")["cuda_graph_decode_max_bs"] == 1
    assert on("rtx5090", "--speculative-algorithm NEXTN")["cuda_graph_decode_max_bs"] == 48


def test_prefill_bucket_list():
    assert prefill_batch_sizes(64) == (4, 8, 12, 16, 20, 24, 28, 32, 48, 64)
    assert len(prefill_batch_sizes(8192)) == 58


def test_kda_and_pp_turn_the_breakable_prefill_graph_off():
    kimi = on("h200", model="python -m sglang.launch_server --model-path moonshotai/Kimi-Linear-48B-A3B-Instruct")
    assert kimi["cuda_graph_prefill_backend"] == "disabled"
    assert on("h200", "--pp-size 2")["cuda_graph_prefill_backend"] == "disabled"
    assert on("h200")["cuda_graph_prefill_backend"] == "breakable"
    # Qwen3.5 is multimodal but on the BCG allowlist
    q35 = on("h200", model="python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B")
    assert q35["cuda_graph_prefill_backend"] == "breakable"


def test_vlm_adjustment_reads_default_vit_depth():
    # Qwen3.5's vision_config names its depth `depth`, so the engine's getattr default of 24 layers applies
    assert vlm_factor(None, 1152) == pytest.approx(0.924765625)
    q = on("h200", model="python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B")
    assert q["mem_fraction_static"] == pytest.approx(0.903 * 0.924765625)
    lm_only = on("h200", "--language-model-only", model="python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B")
    assert lm_only["mem_fraction_static"] == 0.903


def test_post_capture_mode_shrinks_the_reserve_and_sets_the_slack_floor():
    env = "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1"
    a = on("h200", "--tp 4", env=env)
    assert a["post_capture_kv_sizing_planned"]
    assert a["mem_fraction_static"] == round((143771 - 1536 - 512) / 143771, 3)
    # engine-semantics §4.4: H200, chunked 8192, TP4 -> 512 + 12288 + 512 = 13,312 MiB
    assert pre_capture_activation_reserve_mb(a, 143771) == 13_312
    assert pre_capture_reserve_gib(a, 143771) == 13.0
    assert pre_capture_reserve_gib(on("h200", "--tp 4"), 143771) is None
    # MLA (Kimi) never qualifies
    assert not on("h200", env=env, model="python -m sglang.launch_server --model-path "
                                         "moonshotai/Kimi-Linear-48B-A3B-Instruct")["post_capture_kv_sizing_planned"]
