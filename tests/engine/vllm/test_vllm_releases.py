"""vLLM 0.24.0 beside 0.33.0: each release's own rules (engine/vllm/behaviours.py), the numbers its own planning
code gives (tests/conformance/test_vllm_conformance.py drives both releases' code on the same grid)."""

from __future__ import annotations

import re

import pytest

from hybridplan.engine import for_engine
from hybridplan.engine.vllm.behaviours import RELEASES
from hybridplan.errors import BadInput
from hybridplan.vllm_explain import explain_vllm

QWEN = "vllm serve Qwen/Qwen3.5-27B --max-model-len 32768"


def _explain(command: str, version: str, gpu: str = "h200") -> dict:
    return explain_vllm(command, version=version, kv_memory_gib=40, gpu=gpu)


def test_without_prefill_checkpoints_0_24_keeps_two_state_pages_and_a_smaller_block():
    """Under prefix caching on an H200, 0.33.0's FlashInfer GDN prefill keeps a checkpoint page and aligns the block
    to its 64-token grid (832 tokens, 3 pages in each of 3 state groups); 0.24.0 has neither (784, 2 pages)."""
    new, old = (_explain(QWEN + " --enable-prefix-caching", v) for v in ("0.33.0", "0.24.0"))
    assert (new["block_size"], new["state_pages_per_request"], new["kv_cache_tokens"]) == (832, 9, 526294)
    assert (old["block_size"], old["state_pages_per_request"], old["kv_cache_tokens"]) == (784, 6, 570026)


def test_prefix_caching_default_and_batch_tiers_differ():
    """0.24.0 leaves prefix caching off for hybrids (state in 'none' mode) and has no >= 160 GiB batch tier: a B200
    gets 8192 batched tokens there, 16384 on 0.33.0."""
    assert _explain(QWEN, "0.24.0")["resolved"]["mamba_cache_mode"] == "none"
    assert _explain(QWEN, "0.33.0")["resolved"]["mamba_cache_mode"] == "align"
    assert _explain(QWEN, "0.24.0", "b200")["resolved"]["max_num_batched_tokens"] == 8192
    assert _explain(QWEN, "0.33.0", "b200")["resolved"]["max_num_batched_tokens"] == 16384


def test_mamba_cache_mode_is_honoured_on_0_24_and_all_mode_is_refused_by_name():
    nemotron = "vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --max-model-len 32768 --enable-prefix-caching"
    with pytest.raises(BadInput, match="'all'.*NemotronHForCausalLM.*not modelled"):
        _explain(nemotron, "0.24.0")
    assert _explain(nemotron + " --mamba-cache-mode align", "0.24.0")["resolved"]["mamba_cache_mode"] == "align"
    assert _explain(nemotron, "0.33.0")["resolved"]["mamba_cache_mode"] == "align"


def test_each_release_parses_with_its_own_flags():
    """0.24.0 turns prefix caching off with --no-enable-prefix-caching; --disable-prefix-caching is 0.33.0's."""
    assert for_engine("vllm", "0.24.0").parse_command(QWEN + " --no-enable-prefix-caching").values[
        "enable_prefix_caching"] is False
    with pytest.raises(BadInput, match="unrecognized arguments: --disable-prefix-caching"):
        for_engine("vllm", "0.24.0").parse_command(QWEN + " --disable-prefix-caching")
    assert for_engine("vllm", "0.33.0").parse_command(QWEN + " --disable-prefix-caching").values[
        "enable_prefix_caching"] is False


def test_every_change_names_the_file_and_function_it_mirrors():
    changes = [c for r in RELEASES.values() for c in r.changes]
    assert len(changes) >= 5
    for c in changes:
        assert re.fullmatch(r"[\w/]+\.py::[\w.]+(, [\w/]+\.py::[\w.]+)*", c.rule), c.rule
