"""engine/vllm/serving/memory.py: the card-alone terms of vLLM's determine_available_memory."""

from __future__ import annotations

import pytest

from hybridplan.engine.vllm.engine import for_version as vllm_release
from hybridplan.models.loader import load_model
from hybridplan.engine.vllm.serving.memory import capture_sizes, weights_per_rank
from hybridplan.weights.quant import QuantPolicy


@pytest.mark.parametrize("seqs,spec,batched,sm,count", [
    (1, 3, 8192, 120, 4),  # club-3090#617: 'Profiling CUDA graph memory: PIECEWISE=4 (largest=8)'
    (2, 3, 8192, 86, 5),  # club-3090#104: 'PIECEWISE=5 (largest=16)'
    (256, 0, 8192, 90, 51),  # the 512 ceiling: 1, 2, 4, 8..248 by 8, 256..512 by 16
    (512, 0, 8192, 100, 83),  # sm100's 1024 ceiling: 256..1024 by 16
    (256, 0, 128, 90, 19),  # max_num_batched_tokens caps it
])
def test_capture_sizes_follow_the_default_grid(seqs, spec, batched, sm, count):
    assert capture_sizes(seqs, spec, batched, sm) == count


def test_modelopt_layer_entry_prices_that_layers_experts():
    """nvidia/Qwen3.6-35B-A3B-NVFP4's hf_quant_config lists each layer's routed experts as one module
    ('...layers.0.mlp.experts': W4A16_NVFP4); they are priced as NVFP4, not bf16 (63.35 GiB before)."""
    w = weights_per_rank(load_model("nvidia/Qwen3.6-35B-A3B-NVFP4"), "nvidia/Qwen3.6-35B-A3B-NVFP4", 1, None, False)
    assert 19 * 2**30 < w.value < 22 * 2**30
    policy = QuantPolicy(per_name={"m.layers.0.mlp.experts": "w4a16_nvfp4"})
    assert policy.scheme("m.layers.0.mlp.experts.gate_proj", "expert") == "w4a16_nvfp4"
    assert policy.scheme("m.layers.0.mlp.gate_proj", "linear") == "bf16"


def test_only_the_requested_memory_moves_with_the_utilization():
    """determine_available_memory takes the weights, overhead, activation peak and graphs from ceil(total x u), so
    two utilizations differ in available KV memory by exactly the difference of their requests."""
    from dataclasses import replace

    from hybridplan.hardware.catalog import from_options
    from hybridplan.models.loader import load_model
    from hybridplan.engine.vllm.serving.memory import from_card
    from hybridplan.engine.vllm.serving.launch import card, resolve_on

    engine = vllm_release(None)
    cmd = engine.parse_command("vllm serve Qwen/Qwen3.8-27B-FP8 -tp 2 --max-model-len 131072")
    args = resolve_on(engine, cmd, load_model("Qwen/Qwen3.8-27B-FP8"), card("rtx5090"))
    gpu = from_options("rtx5090", None)
    lo, hi = (from_card(replace(args, gpu_memory_utilization=u), gpu, None) for u in (0.85, 0.95))
    assert hi.available.value - lo.available.value == hi.requested.value - lo.requested.value > 0
    assert (hi.weights, hi.overhead, hi.activation, hi.cudagraph) == (lo.weights, lo.overhead, lo.activation,
                                                                      lo.cudagraph)


DUAL_MAX = ("vllm serve Qwen/Qwen3.8-27B-FP8 --quantization fp8 -tp 2 --max-model-len 262144 "
            "--gpu-memory-utilization 0.92 --max-num-seqs 2 --max-num-batched-tokens 8192 --kv-cache-dtype fp8 "
            "--enable-prefix-caching --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'")


@pytest.mark.parametrize("gpu,consumed,peak,graph_estimate,kv,consumed_error,kv_error", [
    # club-3090 PR #1139 (2 RTX 3090s, v0.27.1, no constant fitted on it): 'Actual usage is 15.25 GiB for consumed
    # memory (weights + non-torch), 1.66 GiB for peak activation ... kv cache memory in use is 4.76 GiB';
    # 'CUDA graph pool memory: 0.14 GiB (actual), 0.2 GiB (estimated)'
    ("rtx3090", 15.25, 1.66, 0.20, 4.76, 0.0, 0.03),
    # club-3090#1087 (2 RTX 5090s, the same launch and release; its non-default args carry MTP 3): 15.05 consumed,
    # 1.59 peak, 0.13 estimated, 12.24 GiB
    ("rtx5090", 15.05, 1.59, 0.13, 12.24, 0.2, -0.23),
])
def test_dual_max_terms_against_the_startup_summary(gpu, consumed, peak, graph_estimate, kv, consumed_error,
                                                     kv_error):
    """The transient activation (the logged peak less the graph estimate it folds in) is the same 1.46 GiB on both
    cards and the timeline's activation term is it; weights (with the MTP layers) + the TP overhead are the 3090
    pair's consumed memory and 0.20 GiB over the 5090 pair's, which carries that pair's available estimate 0.23 under
    (one startup summary per card class so far, so the TP overhead stays one value, not one per card)."""
    from hybridplan.hardware.catalog import from_options
    from hybridplan.models.loader import load_model
    from hybridplan.engine.vllm.serving.memory import from_card
    from hybridplan.engine.vllm.serving.launch import card, resolve_on

    gib = 2**30
    engine = vllm_release(None)
    args = resolve_on(engine, engine.parse_command(DUAL_MAX), load_model("Qwen/Qwen3.8-27B-FP8"), card(gpu))
    m = from_card(args, from_options(gpu, None), "fp8")
    assert round(m.activation.value / gib - (peak - graph_estimate), 2) == 0.0
    assert round((m.weights.value + m.overhead.value) / gib - consumed, 2) == consumed_error
    assert round(m.available.value / gib - kv, 2) == kv_error
