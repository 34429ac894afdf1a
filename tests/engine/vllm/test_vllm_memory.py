"""planner/vllm_memory.py: the card-alone terms of vLLM's determine_available_memory."""

from __future__ import annotations

import pytest

from hybridplan.planner.vllm_memory import capture_sizes, weights_per_rank
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
    w = weights_per_rank("nvidia/Qwen3.6-35B-A3B-NVFP4", 1, None, False)
    assert 19 * 2**30 < w.value < 22 * 2**30
    policy = QuantPolicy(per_name={"m.layers.0.mlp.experts": "w4a16_nvfp4"})
    assert policy.scheme("m.layers.0.mlp.experts.gate_proj", "expert") == "w4a16_nvfp4"
    assert policy.scheme("m.layers.0.mlp.gate_proj", "linear") == "bf16"
