"""Every release 0.5.18-0.5.23 behind engine.for_version: 0.5.23's model run with the release's switches and flag
registry. Worked values per release (hand-checked against each release's own rules, engine/sglang/behaviours.py)."""

from __future__ import annotations

import pytest

from hybridplan.engine.api import DEFAULT, SUPPORTED, for_version
from hybridplan.engine.sglang.behaviours import VERSIONS
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.hardware.catalog import lookup
from hybridplan.engine.sglang.serving.loading import load

LAUNCH = "python -m sglang.launch_server --model-path"
QWEN38_TEXT = f"{LAUNCH} Qwen/Qwen3.8-2.4T-A95B --tp 8"  # Qwen3_5MoeForCausalLM: text-only Qwen3.5-family
QNEXT = f"{LAUNCH} Qwen/Qwen3-Next-80B-A3B-Thinking"
RTX5090 = lookup("rtx5090").platform()  # 32607 MiB: the 20-35 GiB tier


def test_every_release_is_supported_and_the_newest_is_the_default():
    assert SUPPORTED == VERSIONS and DEFAULT == "0.5.23"
    assert [for_version(v).version for v in VERSIONS] == list(VERSIONS)
    with pytest.raises(BadInput, match="unsupported engine version '0.5.17'; supported: 0.5.18, 0.5.19"):
        for_version("0.5.17")


@pytest.mark.parametrize("version,slots,strategy", [
    ("0.5.18", 3, "auto"), ("0.5.19", 5, "extra_buffer"), ("0.5.22", 5, "extra_buffer"), ("0.5.23", 5, "extra_buffer")])
def test_text_only_qwen35_joins_the_radix_archs_in_0_5_19(version, slots, strategy):
    """0.5.18 has no Qwen3_5MoeForCausalLM in _MAMBA_RADIX_CACHE_ARCHS: S = 3 (no tracking slots), strategy untouched;
    from 0.5.19 auto resolves to extra_buffer with overlap on: S = 3 + 2."""
    args = load(QWEN38_TEXT, version=version).args
    assert for_version(version).slots_per_request(args) == slots
    assert args["mamba_radix_cache_strategy"] == strategy


def test_an_explicit_extra_buffer_outside_the_lists_counts_before_0_5_21():
    """0.5.18 keeps --mamba-radix-cache-strategy extra_buffer on an arch its lists lack, and the ratio counts it
    (model_override_base.py::mamba_extra_buffer_of has no arch gate): S = 3 + 2 with overlap on."""
    args = load(f"{QWEN38_TEXT} --mamba-radix-cache-strategy extra_buffer", version="0.5.18").args
    assert args["uses_mamba_radix_cache"] is False
    assert for_version("0.5.18").slots_per_request(args) == 5


def test_no_buffer_with_overlap_is_refused_from_0_5_19():
    cmd = f"{QWEN38_TEXT} --mamba-radix-cache-strategy no_buffer"
    assert load(cmd, version="0.5.18").args["mamba_radix_cache_strategy"] == "no_buffer"
    with pytest.raises(EngineRefusal, match="no_buffer do not support overlap schedule"):
        load(cmd, version="0.5.19")


@pytest.mark.parametrize("version,chunk,max_bs,fraction", [
    # 512 + 1.5 x 2048 + 128 + (24 x 2 + 42 buckets x 8) = 4096 MiB; round((32607 - 4096) / 32607, 3)
    ("0.5.19", 2048, 24, 0.874),
    # 512 + 1.5 x 4096 + 128 + (48 x 2 + 50 buckets x 8) = 7280 MiB; round((32607 - 7280) / 32607, 3)
    ("0.5.20", 4096, 48, 0.777),
    ("0.5.23", 4096, 48, 0.777),
])
def test_the_mid_memory_tier_on_a_32_gb_card(version, chunk, max_bs, fraction):
    args = load(QNEXT, platform=RTX5090, version=version).args
    assert (args["chunked_prefill_size"], args["cuda_graph_decode_max_bs"], args["mem_fraction_static"]) == \
        (chunk, max_bs, fraction)


@pytest.mark.parametrize("version,max_bs", [("0.5.21", 48), ("0.5.22", 16), ("0.5.23", 16)])
def test_a_typed_mrr_caps_the_decode_graph_from_0_5_22(version, max_bs):
    args = load(f"{QNEXT} --max-running-requests 16", platform=RTX5090, version=version).args
    assert args["cuda_graph_decode_max_bs"] == max_bs


def test_cuda_graph_bs_is_accepted_by_0_5_19_and_refused_by_0_5_20_with_its_parser_message():
    """--cuda-graph-bs is a deprecated alias of --cuda-graph-bs-decode until 0.5.19; 0.5.20 removed it, so argparse's
    prefix matching finds two candidates."""
    args = load(f"{QNEXT} --cuda-graph-bs 1 2 4", platform=RTX5090, version="0.5.19").args
    assert args["cuda_graph_decode_max_bs"] == 4
    with pytest.raises(BadInput) as exc:
        load(f"{QNEXT} --cuda-graph-bs 1 2 4", version="0.5.20")
    assert exc.value.message == ("sglang serve: error: ambiguous option: --cuda-graph-bs could match "
                                 "--cuda-graph-bs-decode, --cuda-graph-bs-prefill")


def test_fields_a_release_lacks_take_the_flags_off_value():
    """--attn-dp-size arrives in 0.5.22; before it the model reads attn_dp_size 1 (its dp from --enable-dp-attention)."""
    args = load(f"{QNEXT} --tp 4 --dp 2 --enable-dp-attention", version="0.5.21").args
    assert args["attn_dp_size"] == 2 and args["attn_tp_size"] == 2
    with pytest.raises(BadInput, match="unrecognized arguments: --attn-dp-size"):
        load(f"{QNEXT} --tp 4 --attn-dp-size 2", version="0.5.21")


def test_mrr_below_attention_dp_sizes_one_slot_only_from_0_5_23():
    """_handle_max_mamba_cache with --disable-radix-cache: K = mrr // dp = 0 refuses in 0.5.22; max(1, ..) in 0.5.23."""
    cmd = f"{QNEXT} --tp 4 --dp 4 --enable-dp-attention --max-running-requests 2 --disable-radix-cache"
    new = load(cmd, version="0.5.23")
    assert for_version("0.5.23").size_pools(20.0, new.args, new.geometry).state.max_mamba_cache_size == 1
    old = load(cmd, version="0.5.22")
    with pytest.raises(EngineRefusal, match="Computed max_mamba_cache_size=0"):
        for_version("0.5.22").size_pools(20.0, old.args, old.geometry)


@pytest.mark.parametrize("version,draft_states", [("0.5.21", 4), ("0.5.22", 0)])
def test_a_pd_prefill_server_reserves_no_spec_state_from_0_5_22(version, draft_states):
    """MTP (EAGLE auto: 3 steps, topk 1, D = 4) on a PD prefill server."""
    loaded = load(f"{QNEXT} --disaggregation-mode prefill --speculative-algorithm EAGLE --max-running-requests 8",
                  version=version)
    assert for_version(version).draft_states_per_request(loaded.args, loaded.geometry) == draft_states


@pytest.mark.parametrize("version,draft_cell", [("0.5.21", 1 * 512 * 5 * 2), ("0.5.22", 2 * 512 * 5 * 2)])
def test_dflash_draft_kv_is_sized_per_attention_tp_rank_from_0_5_22(version, draft_cell):
    """4 draft KV heads x (256 + 256) x 5 layers x bf16 under TP 4 with attention DP 2 (attention TP 2), on NPU where
    DFLASH with attention DP is validated: per TP rank (1 head) before 0.5.22, per attention-TP rank (2) from it."""
    from hybridplan.engine.sglang.args import Platform

    loaded = load(f"{LAUNCH} Qwen/Qwen3.5-27B --speculative-algorithm DFLASH --speculative-draft-model-path "
                  "SpecForge/qwen3.5-27b-dflash --tp 4 --dp 2 --enable-dp-attention", platform=Platform(device="npu"),
                  version=version)
    assert for_version(version).kv_cell(loaded.args, loaded.geometry, loaded.draft).draft == draft_cell


@pytest.mark.parametrize("version,refusal", [
    ("0.5.18", "Currently DFLASH speculative decoding does not support dp attention."),
    ("0.5.20", "Currently DFLASH speculative decoding does not support dp attention on non-NPU devices."),
    ("0.5.22", "Currently DFLASH speculative decoding does not support dp attention on non-NPU devices."),
    ("0.5.23", None),
])
def test_dflash_with_attention_dp_is_accepted_on_cuda_from_0_5_23(version, refusal):
    cmd = (f"{LAUNCH} Qwen/Qwen3.5-27B --speculative-algorithm DFLASH --speculative-draft-model-path "
           "SpecForge/qwen3.5-27b-dflash --tp 4 --dp 2 --enable-dp-attention --enable-dp-lm-head")
    if refusal is None:
        assert load(cmd, version=version).args["attn_dp_size"] == 2
        return
    with pytest.raises(EngineRefusal) as exc:
        load(cmd, version=version)
    assert exc.value.message == refusal


def test_for_engine_names_each_engine_and_its_release():
    """`for_engine` answers every engine through one base protocol: its name, release and the release's own flags
    (sglang's --mamba-full-memory-ratio, vLLM's --mamba-cache-mode, each absent from the other's registry)."""
    from hybridplan.engine.api import for_engine

    sgl, vllm = for_engine("sglang", "0.5.21"), for_engine("vllm", "0.24.0")
    assert (sgl.name, sgl.version, vllm.name, vllm.version) == ("sglang", "0.5.21", "vllm", "0.24.0")
    assert sgl.registry().knows("--mamba-full-memory-ratio") and not sgl.registry().knows("--mamba-cache-mode")
    assert vllm.registry().knows("--mamba-cache-mode") and not vllm.registry().knows("--mamba-full-memory-ratio")
    with pytest.raises(BadInput, match="--engine: 'trtllm' is not modelled"):
        for_engine("trtllm")
