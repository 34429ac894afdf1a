"""vLLM 0.20.0, 0.20.1 and 0.24.0 beside 0.33.0: each release's own rules (engine/vllm/behaviours.py), the numbers its own planning
code gives (tests/conformance/test_vllm_conformance.py drives both releases' code on the same grid)."""

from __future__ import annotations

import re

import pytest

from hybridplan.engine.vllm.engine import for_version as vllm_release
from hybridplan.engine.vllm.behaviours import RELEASES
from hybridplan.errors import BadInput
from hybridplan.engine.vllm.serving.explain import explain_vllm

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


def test_all_mode_keeps_a_state_page_for_every_block_on_0_24():
    """Nemotron-Nano-9B-v2 under prefix caching on 0.24.0 runs 'all' mode (its class has SupportsMambaPrefixCaching):
    the fp32 state page (5,316,608 B) is 1,298 tokens of 4,096-B attention pages, rounded up to lcm(chunk 128,
    kernel 16) = 128: a 1,408-token block, and every state group holds cdiv(32,768, 1,408) = 24 pages of a request,
    as the attention group does: 8 groups x 24 = 192 blocks of 4 x 5,767,168 B. 40 GiB holds 1,861 blocks, 9.69
    requests, 317,610 tokens. --mamba-cache-mode align keeps 2 pages a group instead; 0.33.0 always aligns."""
    nemotron = "vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --max-model-len 32768 --enable-prefix-caching"
    d = _explain(nemotron, "0.24.0")
    assert d["resolved"]["mamba_cache_mode"] == "all" and d["block_size"] == d["mamba_block_size"] == 1408
    assert d["pages"]["state_unpadded"] == 5316608 and d["pages"]["attention_before_unification"] == 16 * 4096
    assert [g["blocks_per_request"] for g in d["groups"]] == [24] * 8 and d["blocks_per_request"] == 192
    assert d["bytes_per_block"] == 4 * 5767168 and d["num_blocks"] == 40 * 2**30 // (4 * 5767168) == 1861
    assert d["kv_cache_tokens"] == int(1861 / 192 * 32768) == 317610
    aligned = _explain(nemotron + " --mamba-cache-mode align", "0.24.0")
    assert aligned["resolved"]["mamba_cache_mode"] == "align" and aligned["state_pages_per_request"] == 7 * 2
    assert _explain(nemotron, "0.33.0")["resolved"]["mamba_cache_mode"] == "align"


def test_each_release_parses_with_its_own_flags():
    """0.24.0 turns prefix caching off with --no-enable-prefix-caching; --disable-prefix-caching is 0.33.0's."""
    assert vllm_release("0.24.0").parse_command(QWEN + " --no-enable-prefix-caching").values[
        "enable_prefix_caching"] is False
    with pytest.raises(BadInput, match="unrecognized arguments: --disable-prefix-caching"):
        vllm_release("0.24.0").parse_command(QWEN + " --disable-prefix-caching")
    assert vllm_release("0.33.0").parse_command(QWEN + " --disable-prefix-caching").values[
        "enable_prefix_caching"] is False


def test_every_change_names_the_file_and_function_it_mirrors():
    changes = [c for r in RELEASES.values() for c in r.changes]
    assert len(changes) >= 5
    for c in changes:
        assert re.fullmatch(r"[\w/]+\.py::[\w.]+(, [\w/]+\.py::[\w.]+)*", c.rule), c.rule


# A public v0.20.0 boot on a 32 GB card under WSL (RedHatAI/Qwen3.6-35B-A3B-NVFP4, found in a public repository's
# notes; the repository is not identified): its lines as logged, the model path mapped to the catalog id of the same
# geometry (nvidia/Qwen3.6-35B-A3B-NVFP4)
BOOT_0_20_0 = """\
(APIServer pid=1) INFO 05-01 20:44:30 [utils.py:233] non-default args: {'model_tag': 'nvidia/Qwen3.6-35B-A3B-NVFP4', \
'host': '0.0.0.0', 'model': 'nvidia/Qwen3.6-35B-A3B-NVFP4', 'trust_remote_code': True, 'max_model_len': 65536, \
'quantization': 'compressed-tensors', 'gpu_memory_utilization': 0.9, 'kv_cache_dtype': 'fp8_e4m3', \
'enable_prefix_caching': True, 'max_num_batched_tokens': 8192, 'max_num_seqs': 1, 'enable_chunked_prefill': True, \
'max_cudagraph_capture_size': 1, 'moe_backend': 'cutlass'}
(EngineCore pid=187) INFO 05-01 20:45:03 [core.py:109] Initializing a V1 LLM engine (v0.20.0) with config: ...
(EngineCore pid=187) INFO 05-01 20:45:53 [interface.py:606] Setting attention block size to 2096 tokens to ensure \
that attention page size is >= mamba page size.
(EngineCore pid=187) INFO 05-01 20:47:46 [gpu_worker.py:440] Available KV cache memory: 2.95 GiB
(EngineCore pid=187) INFO 05-01 20:47:46 [kv_cache_utils.py:1711] GPU KV cache size: 75,456 tokens
(EngineCore pid=187) INFO 05-01 20:47:46 [kv_cache_utils.py:1716] Maximum concurrency for 65,536 tokens per request: 3.87x
"""


def test_0_20_0_logs_blocks_per_group_and_0_20_1_concurrency_times_length():
    """The v0.20.0 boot logs 75,456 tokens from 2.95 GiB: 147 blocks of 10 layers x 2096-token fp8 pages, // 4 groups
    x 2096 (0.20.0's _report_kv_cache_config); from 0.20.1 on the same pool logs 3.87 x 65,536 = 253,520."""
    from hybridplan.engine.vllm.serving.logcheck import check_vllm_log

    d = check_vllm_log(BOOT_0_20_0, None, gpu="rtx5090")
    assert d["explained"] and d["log_release"] == d["modelled_release"] == "0.20.0"
    assert [(c["quantity"], c["predicted"]) for c in d["checks"]] == [
        ("block_size", 2096), ("max_model_len", 65536), ("kv_cache_tokens", [75456]), ("max_concurrency", ["3.87"])]
    later = check_vllm_log(BOOT_0_20_0, None, gpu="rtx5090", version="0.20.1")
    assert not later["explained"]
    assert next(c for c in later["checks"] if c["quantity"] == "kv_cache_tokens")["predicted"] == [253520]


def test_0_20_refusals_keep_their_wording_and_parser_has_no_bfloat16_state():
    """0.20.x's _check_enough_kv_cache_memory says "the models's max seq len" and names no CPU backend; its parser
    offers no bfloat16 Mamba cache dtype (config/cache.py::MambaDType), 0.24.0's does."""
    cmd = "vllm serve Qwen/Qwen3.5-27B --max-model-len 262144"
    for version, wording in (("0.20.1", "the models's max seq len"), ("0.24.0", "the model's max seq len")):
        d = explain_vllm(cmd, version=version, kv_memory_gib=1, gpu="h200")
        assert d["verdict"]["phase"] == "kv_cache" and d["verdict"]["message"] == d["error"]["message"]
        assert wording in d["error"]["message"]
        assert ("CPU backend" in d["error"]["message"]) == (version == "0.24.0")
    with pytest.raises(BadInput, match="invalid choice: 'bfloat16'"):
        vllm_release("0.20.1").parse_command(cmd + " --mamba-ssm-cache-dtype bfloat16")
    assert vllm_release("0.24.0").parse_command(cmd + " --mamba-ssm-cache-dtype bfloat16").values[
        "mamba_ssm_cache_dtype"] == "bfloat16"


NEMOTRON = "vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --max-model-len 32768"


def test_hybrid_prefix_caching_turns_on_by_default_in_0_28():
    """0.26.0 and 0.27.x report prefix caching supported for hybrids but keep it opt-in (EngineArgs); 0.28.0 turns it
    on: Qwen3.5-27B on an H200 runs align mode (784-token block, 2 pages in each of 3 state groups) where 0.27.1 ran
    none (1 page a group), and its >= 160 GiB tier gives a B200 16,384 batched tokens."""
    before, after = (_explain(QWEN, v) for v in ("0.27.1", "0.28.0"))
    assert (before["resolved"]["mamba_cache_mode"], before["state_pages_per_request"], before["kv_cache_tokens"]) == (
        "none", 3, 608028)
    assert (after["resolved"]["mamba_cache_mode"], after["block_size"], after["state_pages_per_request"],
            after["kv_cache_tokens"]) == ("align", 784, 6, 570026)
    assert [_explain(QWEN, v, "b200")["resolved"]["max_num_batched_tokens"] for v in ("0.27.1", "0.28.0")] == [
        8192, 16384]


def test_all_mode_by_default_then_on_request_then_gone():
    """Nemotron-Nano-9B-v2 under prefix caching: 'all' by default until 0.27.1 (1,408-token block, 24 pages in each of
    7 state groups); 0.28.0-0.31.0 run align unless --mamba-cache-mode all; 0.32.0 drops the choice and keeps a
    Mamba2 prefill checkpoint page (3 pages a group, not 2)."""
    on = NEMOTRON + " --enable-prefix-caching"
    assert _explain(on, "0.27.1")["resolved"]["mamba_cache_mode"] == "all"
    d = _explain(on, "0.31.0")
    assert (d["resolved"]["mamba_cache_mode"], d["block_size"], d["state_pages_per_request"]) == ("align", 1312, 14)
    d = _explain(on + " --mamba-cache-mode all", "0.31.0")
    assert (d["resolved"]["mamba_cache_mode"], d["block_size"], d["state_pages_per_request"]) == ("all", 1408, 168)
    assert _explain(on, "0.32.0")["state_pages_per_request"] == 21
    with pytest.raises(BadInput, match="invalid choice: 'all'"):
        vllm_release("0.32.0").parse_command(on + " --mamba-cache-mode all")


def test_0_34_asks_the_backend_for_64_token_blocks():
    """0.34.0's CacheConfig.DEFAULT_BLOCK_SIZE is 64: without prefix caching Nemotron-Nano's block is the smallest
    multiple of 64 whose page covers the 5,316,608-B state page (1,344 tokens), 0.33.0's the smallest of 16 (1,312);
    --block-size 16 gives 0.34.0 the 1,312 back."""
    off = NEMOTRON + " --disable-prefix-caching"
    assert [_explain(off, v)["block_size"] for v in ("0.33.0", "0.34.0")] == [1312, 1344]
    assert _explain(off + " --block-size 16", "0.34.0")["block_size"] == 1312


def test_0_34_refusals_follow_the_extensible_kv_cache():
    """0.34.0 defaults --gpu-memory-utilization to 1.0 under its extensible KV cache, and its refusals say so; a
    given utilization is named instead."""
    cmd = "vllm serve Qwen/Qwen3.5-27B --max-model-len 262144"
    d = explain_vllm(cmd, version="0.34.0", kv_memory_gib=1, gpu="h200")
    assert d["verdict"]["phase"] == "kv_cache" and d["error"]["message"] == d["verdict"]["message"]
    assert "The extensible KV cache already takes all device memory left after the model and its activations" in \
        d["error"]["message"] and "Decreasing `max_model_len` also reduces what is needed." in d["error"]["message"]
    d = explain_vllm(cmd + " --gpu-memory-utilization 0.9", version="0.34.0", kv_memory_gib=1, gpu="h200")
    assert "within `gpu_memory_utilization`=0.9; increase it" in d["error"]["message"]
