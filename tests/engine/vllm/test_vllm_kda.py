"""Kimi-Linear (20 KDA + 7 MLA layers) on vLLM 0.33.0 and 0.24.0: the state page, the MLA page, the backend the card
picks and the hybrid block size, worked by hand from vLLM's code and the bundled config (linear_attn_config: 32 heads
of 128, conv kernel 4; kv_lora_rank 512, qk_rope_head_dim 64). tests/conformance/test_vllm_conformance.py checks
the same rules against the releases' own code on 122 generated Kimi-Linear launches each."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridplan.engine.vllm.engine import for_version as vllm_release
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.models.loader import load_model

KIMI = "moonshotai/Kimi-Linear-48B-A3B-Instruct"
GEO = load_model(KIMI)
GIB = 1 << 30


def _args(version: str, flags: str = "", sm: int = 90):
    engine = vllm_release(version)
    return engine, engine.resolve(engine.parse_command(f"vllm serve {KIMI} {flags}"), GEO, sm)


def test_h200_tp1_align_40gib_by_hand():
    """kda_state_shape: conv (3, 3 x 32 x 128 = 12288) bf16 = 73,728 B + recurrent (32, 128, 128) float32 =
    2,097,152 B -> 2,170,880 B. MLA page: 576 B x 2 = 1,152 B a token. FLASH_ATTN_MLA (sm90, bf16 KV); 0.33.0 aligns an
    MLA hybrid to 128: 128 x cdiv(2,170,880, 128 x 1,152) = 128 x 15 = 1,920 tokens, page 2,211,840 B. Groups of 7
    (20 KDA layers -> 7+7+6, 7 MLA): 15,482,880 B a block, 42,949,672,960 // that = 2,774 blocks. A 131,072-token
    request: cdiv(131072, 1920) = 69 attention blocks + 3 x 2 align-mode state pages = 75."""
    engine, args = _args("0.33.0", "--max-model-len 131072")
    p = engine.plan(args, GEO, 40 * GIB)
    assert (args.attn_backend.name, args.mamba_cache_mode) == ("FLASH_ATTN_MLA", "align")
    assert (p.conv_shape, p.temporal_shape, p.state_dtypes) == ((3, 12288), (32, 128, 128), ("bfloat16", "float32"))
    assert (p.state_page_bytes, p.block_size, p.page_bytes, p.mamba_block_size) == (2170880, 1920, 2211840, 1920)
    assert (p.bytes_per_block, p.num_blocks) == (15482880, 2774)
    assert [(g.kind, g.layers, g.blocks_per_request) for g in p.groups] == [
        ("mamba", 7, 2), ("mamba", 7, 2), ("mamba", 6, 2), ("attention", 7, 69)]
    assert (p.kv_cache_tokens, round(p.max_concurrency, 2)) == (4847916, 36.99)  # 2774 / 75 x 131072


@pytest.mark.parametrize("sm, backend, block", [(90, "FLASHMLA", 1920), (100, "FLASHINFER_MLA", 1888)])
def test_0_24_tp2_fp8_block_follows_the_cards_mla_backend(sm, backend, block):
    """TP2 state: 36,864 + 1,048,576 = 1,085,440 B; fp8 MLA: 576 B a token. FLASH_ATTN_MLA takes no fp8, so Hopper runs
    FLASHMLA (kernel 64, preferred 64): 64 x cdiv(1,085,440, 36,864) = 64 x 30 = 1,920; Blackwell FLASHINFER_MLA
    (32/64, preferred 32): 32 x cdiv(1,085,440, 18,432) = 32 x 59 = 1,888. 0.33.0's 128 floor gives 1,920 on both."""
    engine, args = _args("0.24.0", "-tp 2 --kv-cache-dtype fp8", sm)
    lay = engine.layout(args, GEO)
    assert (args.attn_backend.name, lay.requested_block_size, lay.state_page_bytes) == (
        backend, 64 if sm == 90 else 32, 1085440)
    assert (lay.block_size, lay.page_bytes, args.mamba_cache_mode) == (block, block * 576, "none")
    engine, args = _args("0.33.0", "-tp 2 --kv-cache-dtype fp8", sm)
    assert engine.layout(args, GEO).block_size == 1920


def test_a_user_block_the_backend_cannot_split_picks_the_next_one():
    """--block-size 16 on sm100: FLASHINFER_MLA's kernels (32, 64), CUTLASS_MLA's (128) and FLASHMLA's (64) cannot
    split 16-token blocks, so vLLM falls through to TRITON_MLA; sm120 and Ampere always run TRITON_MLA."""
    assert _args("0.33.0", "--block-size 16", 100)[1].attn_backend.name == "TRITON_MLA"
    assert _args("0.33.0", "--block-size 64", 100)[1].attn_backend.name == "FLASHINFER_MLA"
    assert {_args("0.24.0", "", sm)[1].attn_backend.name for sm in (80, 86, 120)} == {"TRITON_MLA"}
    with pytest.raises(BadInput, match="no MLA attention backend takes --kv-cache-dtype fp8_e5m2"):
        _args("0.33.0", "--kv-cache-dtype fp8_e5m2")
    assert _args("0.33.0", "--attention-backend CUTLASS_MLA", 100)[1].attn_backend.min_kernel_block == 128
    with pytest.raises(BadInput, match="FLASH_ATTN_MLA cannot run --kv-cache-dtype fp8"):
        _args("0.33.0", "--attention-backend FLASH_ATTN_MLA --kv-cache-dtype fp8", 90)


def test_ssm_cache_dtype_reaches_the_page_but_not_the_layers_on_0_33():
    """0.33.0's model class sizes the state page with --mamba-ssm-cache-dtype bfloat16 (73,728 + 1,048,576 B ->
    block 128 x 8 = 1,024, page 1,179,648 B) while the KDA layers keep a float32 state of 2,170,880 B: MambaSpec's
    padding assertion fails. float16 is refused by kda_state_dtype; 0.24.0 ignores the flag (float32)."""
    engine, args = _args("0.33.0", "--mamba-ssm-cache-dtype bfloat16")
    with pytest.raises(EngineRefusal) as exc:
        engine.layout(args, GEO)
    assert (exc.value.kind, exc.value.message) == ("AssertionError", "assert self.page_size_padded >= page_size")
    engine, args = _args("0.33.0", "--mamba-ssm-cache-dtype float16")
    with pytest.raises(EngineRefusal, match="KDA recurrent state supports only auto, float32, and bfloat16; got float16"):
        engine.layout(args, GEO)
    engine, args = _args("0.24.0", "--mamba-ssm-cache-dtype bfloat16")
    assert engine.layout(args, GEO).state_page_bytes == 2170880


def test_prefix_caching_on_0_24_runs_align_with_two_state_pages():
    """Kimi-Linear's 0.24.0 class has no SupportsMambaPrefixCaching: --enable-prefix-caching runs 'align', 2 pages."""
    engine, args = _args("0.24.0", "--enable-prefix-caching --max-model-len 4096")
    lay = engine.layout(args, GEO)
    assert args.mamba_cache_mode == "align" and lay.block_size == lay.mamba_block_size == 1888  # 16 x cdiv(.., 18432)
    assert lay.per_request(4096) == 3 * 2 + 3


def test_kimi_k3_is_refused_by_name():
    geo = load_model("moonshotai/Kimi-K3")
    engine = vllm_release("0.33.0")
    with pytest.raises(BadInput, match="KimiK3ForConditionalGeneration is not modelled yet"):
        engine.resolve(engine.parse_command("vllm serve moonshotai/Kimi-K3"), geo)


@pytest.mark.parametrize("version", ["0.20.0", "0.20.1"])
def test_kimi_linear_on_0_20_is_refused_by_its_state_layout(cli_json, version):
    """0.20.x's kda_state_shape keeps the q, k and v conv states apart (four tensors): refused by name, not planned
    with the fused layout of 0.24.0 and later."""
    code, d = cli_json("explain", "--engine", "vllm", "--engine-version", version, "--kv-memory-gib", "40", "--json",
                       "--", f"vllm serve {KIMI}")
    assert code == 2 and f"Kimi-Linear on vLLM {version} is not modelled" in d["error"]["message"]
    assert "kda_state_shape" in d["error"]["message"]


def test_explain_and_compare_answer_for_kimi_linear(cli_json):
    code, d = cli_json("explain", "--engine", "vllm", "--kv-memory-gib", "40", "--json", "--",
                       "vllm", "serve", KIMI, "--max-model-len", "131072")
    assert code == 0 and d["platform"]["attention_backend"] == "FLASH_ATTN_MLA"
    assert (d["kv_cache_tokens"], d["num_blocks"], d["block_size"], d["block_size_before_alignment"]) == (
        4847916, 2774, 1920, 16)
    assert d["pages"]["attention_before_unification"] == 16 * 1152 and d["pages"]["unified"] == 2211840
    code, c = cli_json("compare", "--model", KIMI, "--memory-gib", "40", "-L", "131072", "--json")
    assert code == 0 and (c["vllm"]["kv_tokens"], c["vllm"]["requests_at_length"]) == (4847916, 36)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(("0.33.0", "0.24.0")), st.sampled_from((1, 2, 4, 8)), st.sampled_from(("auto", "fp8", "bfloat16")),
       st.sampled_from((80, 86, 90, 100, 120)), st.sampled_from((None, 16, 64, 128, 256)))
def test_the_block_is_the_smallest_kernel_multiple_whose_page_covers_the_state(version, tp, kv, sm, block):
    """Platform._align_hybrid_block_size's contract on every card: the block is a multiple of the chosen backend's
    smallest kernel block (of 128 on 0.33.0) and of the requested block's alignment, its page covers the state page,
    and one alignment step less would not."""
    flags = f"-tp {tp} --kv-cache-dtype {kv}" + (f" --block-size {block}" if block else "")
    engine, args = _args(version, flags, sm)
    lay = engine.layout(args, GEO)
    step = max(args.attn_backend.min_kernel_block, lay.requested_block_size, 128 if version == "0.33.0" else 1)
    assert lay.block_size % step == 0 and lay.block_size % args.attn_backend.min_kernel_block == 0
    assert lay.page_bytes >= lay.state_page_bytes > (lay.block_size - step) * lay.attn_page_bytes_per_token
    assert args.attn_backend.supports_block_size(lay.block_size)
