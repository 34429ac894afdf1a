"""The memory timeline: P, weights, A, slack, reserves, the pool budget, and the headroom estimate."""

from __future__ import annotations

import pytest

from hybridplan.errors import BadInput
from hybridplan.engine.sglang.serving.explain import explain
from hybridplan.hardware.catalog import lookup
from hybridplan.engine.sglang.serving.timeline import build
from hybridplan.provenance import Source
from hybridplan.engine.api import weights_query
from hybridplan.weights.report import model_weights
from tests.conftest import resolve_cmd

Q27 = "python -m sglang.launch_server --model-path Qwen/Qwen3.5-27B --mem-fraction-static 0.85"


def test_boot_log_numbers_reproduce_engine_example_e3():
    # engine-semantics §4.9 E3: A = 87.5, P = 139.3, mfs 0.85, multimodal -> rest 66.5073, K 218, T 575,225
    d = explain(Q27, available_gib=87.5, pre_load_gib=139.3)
    assert d["pool_budget_gib"] == pytest.approx(66.50734375)
    assert d["max_mamba_cache_size"] == 218 and d["max_total_num_tokens"] == 575_225
    tl = d["memory"]["timeline"]
    assert tl["available_gib"]["source"] == "measured" and tl["mm_reservation_gib"]["value"] == pytest.approx(100 / 1024)
    assert d["memory"]["weights"] is None


def test_gpu_timeline_steps_add_up():
    gpu = lookup("h200")
    args, geo, _ = resolve_cmd(Q27, platform=gpu.platform())
    w = model_weights(weights_query(args, geo), geo)
    tl = build(args, geo, gpu=gpu, weights=w)
    assert tl.capacity_gib.value == pytest.approx(143771 / 1024)
    # the H200's torch total was measured on a lent card (benchmarks/device/h200-2026-12-04.json: 143155.94 MiB)
    assert tl.visible_gib.value == pytest.approx(143156 / 1024) and tl.visible_gib.source is Source.MEASURED
    assert tl.pre_load_gib.value == pytest.approx(tl.visible_gib.value - tl.context_gib.value)
    assert tl.available_gib.value == pytest.approx(tl.pre_load_gib.value - w.per_rank_bytes / (1 << 30))
    assert tl.rest_gib.value == pytest.approx(tl.available_gib.value - tl.pre_load_gib.value * 0.15 - 100 / 1024)
    assert tl.context_gib.source is Source.ESTIMATE and tl.headroom_gib.source is Source.ESTIMATE
    assert tl.mem_fraction_static.source is Source.EXPLICIT
    # the engine's own reserve at chunk 8192, decode graph 256 and 58 prefill buckets, without the 10 GiB floor, is
    # kept for reference; the estimate is the sum of its parts and the safe fraction keeps the slack need
    assert tl.engine_reserve_gib.value * 1024 == pytest.approx(512 + 1.5 * 8192 + 128 + 256 * 2 + 58 * 8)
    assert tl.headroom_gib.value == pytest.approx(sum(p.nbytes for p in tl.headroom_parts) / (1 << 30))
    assert tl.headroom_gib.value < tl.engine_reserve_gib.value / 4
    assert tl.pools_gib.value == pytest.approx(tl.rest_gib.value, abs=0.01)  # the ratio branch spends the budget
    assert tl.slack_need_gib.value == pytest.approx(
        tl.headroom_gib.value - tl.mm_reservation_gib.value + tl.pools_gib.value - tl.rest_gib.value)
    # the safe fraction keeps the calibration margin free on top of the need
    need = tl.slack_need_gib.value + tl.margin_gib.value
    assert tl.margin_gib.value == pytest.approx(0.28) and tl.margin_gib.source is Source.ESTIMATE
    assert tl.max_safe_mem_fraction.value == pytest.approx(1 - need / tl.pre_load_gib.value, abs=1e-3)
    assert tl.slack_fits_headroom == (tl.slack_gib.value >= need)


def test_visible_memory_without_an_observed_torch_total():
    # no torch total is observed for the B200: memory.total less the driver reserve the RTX 5090 shows (494 MiB)
    gpu = lookup("b200")
    args, geo, _ = resolve_cmd(Q27, platform=gpu.platform())
    tl = build(args, geo, gpu=gpu, weights=model_weights(weights_query(args, geo), geo))
    assert tl.visible_gib.value == pytest.approx((gpu.memory_mib - 494) / 1024)
    assert tl.visible_gib.source is Source.ESTIMATE


def test_default_fraction_comes_from_the_card():
    gpu = lookup("h100")
    d = explain("python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Thinking --tp 4", gpu=gpu)
    tl = d["memory"]["timeline"]
    assert tl["mem_fraction_static"]["value"] == 0.819 and tl["mem_fraction_static"]["source"] == "engine rule"
    assert d["args"]["mem_fraction_static"]["value"] == 0.819


def test_weights_that_do_not_fit_are_an_engine_refusal_not_a_crash():
    d = explain("python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B --mem-fraction-static 0.9",
                gpu=lookup("rtx5090"))
    assert d["memory"]["timeline"]["available_gib"]["value"] < 0
    assert any("runs out of memory while loading" in w for w in d["warnings"])
    assert d["error"]["rule"].endswith("_handle_max_mamba_cache")  # what the sizing would say on a negative budget


def test_unified_memory_box_leaves_the_host_its_share():
    """On GB10 torch's total is the host's MemTotal (no framebuffer to reserve) and the engine's baseline is the
    host's available memory: P is MemTotal less the CUDA context and what the host holds, inside the public readings."""
    spark = lookup("dgx-spark")
    args, geo, _ = resolve_cmd(Q27, platform=spark.platform())
    tl = build(args, geo, gpu=spark, weights=model_weights(weights_query(args, geo), geo))
    assert tl.visible_gib.value == pytest.approx(124_610 / 1024) and "no framebuffer" in tl.visible_gib.note
    assert tl.context_gib.value == pytest.approx(8.4) and "unified" in tl.context_gib.note
    assert 111.97 < tl.pre_load_gib.value < 113.93  # the two public "Load weight begin" readings (planner constants)
    warnings = explain(Q27, gpu=spark)["memory"]["warnings"]
    assert any("earlyoom" in w and "highest safe fraction there is about 0.8" in w for w in warnings)
    assert not any("earlyoom" in w for w in explain(Q27, gpu=lookup("rtx-pro-6000"))["memory"]["warnings"])


def test_missing_inputs_are_bad_input():
    args, geo, _ = resolve_cmd(Q27)
    with pytest.raises(BadInput, match="needs a GPU"):
        build(args, geo, available_gib=80.0)
    with pytest.raises(BadInput, match="needs the weights"):
        build(args, geo, pre_load_gib=139.0)
    with pytest.raises(BadInput, match="positive"):
        build(args, geo, available_gib=-1.0, pre_load_gib=139.0)
    args2, geo2, _ = resolve_cmd("python -m sglang.launch_server --model-path Qwen/Qwen3.5-27B")
    with pytest.raises(BadInput, match="mem-fraction-static"):
        build(args2, geo2, available_gib=80.0, pre_load_gib=139.0)


def test_pool_budget_for_a_command_and_card_matches_explain():
    from hybridplan.engine.sglang.serving.timeline import pool_budget_for

    gpu = lookup("h200")
    budget, memory = pool_budget_for(Q27, gpu)
    d = explain(Q27, gpu=gpu)
    assert budget.rest_gib == pytest.approx(d["pool_budget_gib"]) and memory["timeline"]["gpu"] == "h200"
    # a given checkpoint size scales the loaded share (language model + ViT, not the MTP head) by the same factor
    given, mem2 = pool_budget_for(Q27, gpu, checkpoint_bytes=60 * 10**9)
    w = memory["weights"]
    ckpt, loaded = w["checkpoint_bytes"]["value"], w["target_bytes_per_rank"]["value"]
    assert mem2["weights"]["checkpoint_bytes"] == {"value": 60 * 10**9, "source": "input",
                                                    "note": "checkpoint size given (split as estimated)"}
    assert (budget.rest_gib - given.rest_gib) * (1 << 30) == pytest.approx((60 * 10**9 - ckpt) * loaded / ckpt, rel=1e-6)
