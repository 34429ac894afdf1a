"""vLLM 0.33.0 behind engine.for_engine: its parser, its resolution and its KV cache plan, against numbers vLLM's own
planning code produced (conformance/vllm_oracle_driver.py on CPU) for bundled checkpoints."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridplan.engine.vllm.engine import for_version as vllm_release
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.models.loader import load_model

ENGINE = vllm_release("0.33.0")
GIB = 1 << 30


def _plan(text: str, gib: float, sm: int = 90):
    cmd = ENGINE.parse_command(text)
    geo = load_model(cmd.values["model"])
    return ENGINE.plan(ENGINE.resolve(cmd, geo, sm), geo, int(gib * GIB))


def test_the_three_launch_forms_parse_alike():
    a = ENGINE.parse_command("vllm serve Qwen/Qwen3.5-27B -tp 2 --max_model_len 32768 --disable-prefix-caching")
    b = ENGINE.parse_command("python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3.5-27B "
                             "--tensor-parallel-size 2 --max-model-len 32768 --disable-prefix-caching")
    c = ENGINE.parse_command("(APIServer pid=1) INFO 12-01 non-default args: {'model_tag': 'Qwen/Qwen3.5-27B', "
                             "'tensor_parallel_size': 2, 'max_model_len': 32768, 'enable_prefix_caching': False}")
    assert a.values == b.values == c.values == {"model": "Qwen/Qwen3.5-27B", "tensor_parallel_size": 2,
                                                "max_model_len": 32768, "enable_prefix_caching": False}


def test_the_releases_own_parser_refuses():
    # EnableDisableAction (0.33.0) keeps BooleanOptionalAction's --no-enable-x hidden but taken; --no-disable-x is not
    assert ENGINE.parse_command("vllm serve Qwen/Qwen3.5-27B --no-enable-prefix-caching").values[
        "enable_prefix_caching"] is False
    with pytest.raises(BadInput, match="vllm serve: error: unrecognized arguments: --no-disable-prefix-caching"):
        ENGINE.parse_command("vllm serve Qwen/Qwen3.5-27B --no-disable-prefix-caching")
    with pytest.raises(BadInput, match="invalid choice: 'all'"):
        ENGINE.parse_command("vllm serve Qwen/Qwen3.5-27B --mamba-cache-mode all")
    with pytest.raises(BadInput, match="not a vLLM server command"):
        ENGINE.parse_command("python -m sglang.launch_server --model-path Qwen/Qwen3.5-27B")


def test_prefix_caching_decides_the_cache_mode():
    geo = load_model("Qwen/Qwen3.5-27B")
    on = ENGINE.resolve(ENGINE.parse_command("vllm serve Qwen/Qwen3.5-27B --mamba-cache-mode none"), geo)
    off = ENGINE.resolve(ENGINE.parse_command("vllm serve Qwen/Qwen3.5-27B --disable-prefix-caching"), geo)
    assert (on.enable_prefix_caching, on.mamba_cache_mode) == (True, "align")  # --mamba-cache-mode has no effect
    assert any("no effect" in n for n in on.notes)
    assert (off.mamba_cache_mode, off.mamba_ssm_cache_dtype) == ("none", "float32")  # Qwen3.5's config dtype


def test_qwen35_27b_prefix_caching_off_40gib():
    """vLLM: block 784 (attention page raised to cover the 3,207,168-byte state page), 835 blocks, 647,604 tokens."""
    p = _plan("vllm serve Qwen/Qwen3.5-27B --disable-prefix-caching", 40)
    assert (p.block_size, p.mamba_block_size, p.state_page_bytes, p.page_bytes) == (784, 262144, 3207168, 3211264)
    assert p.attn_page_bytes_at_requested_block == 16 * 4096
    assert (p.num_blocks, p.kv_cache_tokens, repr(p.max_concurrency)) == (835, 647604, "2.470414201183432")
    assert [g.blocks_per_request for g in p.groups] == [1, 1, 1, 335]


def test_qwen35_27b_align_auto_fit_6gib():
    """vLLM: align mode lifts the block to 832 (FlashInfer GDN checkpoints every 64 tokens), 3 state pages per group,
    auto-fit to 89,856 tokens, 90,624 logged."""
    p = _plan("vllm serve Qwen/Qwen3.5-27B --max-model-len auto", 6)
    assert (p.block_size, p.mamba_block_size, p.mamba_cache_mode) == (832, 832, "align")
    assert (p.num_blocks, p.max_model_len, p.kv_cache_tokens) == (118, 89856, 90624)
    assert p.state_pages_per_request == 9 and p.blocks_per_request == 117


def test_qwen35_35b_fp8_tp2_6gib():
    p = _plan("vllm serve Qwen/Qwen3.5-35B-A3B -tp 2 --kv-cache-dtype fp8 --max-model-len -1", 6)
    assert (p.block_size, p.page_bytes, p.num_blocks, p.kv_cache_tokens) == (2112, 1081344, 595, 1163997)


def test_full_length_refused_with_vllms_message():
    with pytest.raises(EngineRefusal, match=r"estimated maximum model length is 89856") as exc:
        _plan("vllm serve Qwen/Qwen3.5-27B", 6)
    assert exc.value.rule.endswith("_check_enough_kv_cache_memory")
    assert "(16.5 GiB KV cache is needed" in exc.value.message


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=20, max_value=120), st.integers(min_value=1, max_value=8))
def test_more_memory_never_serves_less(gib, extra):
    a, b = _plan("vllm serve Qwen/Qwen3.5-27B", gib), _plan("vllm serve Qwen/Qwen3.5-27B", gib + extra)
    assert b.num_blocks >= a.num_blocks and b.kv_cache_tokens >= a.kv_cache_tokens
    assert a.kv_cache_tokens == int(a.num_blocks / a.blocks_per_request * a.max_model_len)


def test_mtp_drafter_joins_the_attention_group_and_the_state_pages():
    """club-3090#594 (2x RTX 3090, TP2, fp8 KV, MTP 3): vLLM logged 300,220 tokens, 1.15x from 5.33 GiB."""
    p = _plan("vllm serve Qwen/Qwen3.6-27B --dtype bfloat16 -tp 2 --max-model-len 262144 --kv-cache-dtype fp8 "
              "--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'", 5.33, sm=86)
    assert [(g.kind, g.layers) for g in p.groups] == [("mamba", 16)] * 3 + [("attention", 17)]
    assert p.conv_shape == (6, 5120) and p.block_size == 1600  # conv window K-1+3 rows; the page it forces
    assert p.state_pages_per_request == 3 * (2 + 3)  # align: 2 + num_speculative_blocks (no checkpoint on sm86)
    assert (p.kv_cache_tokens, round(p.max_concurrency, 2)) == (300220, 1.15)


def test_other_drafters_are_refused_by_name():
    with pytest.raises(BadInput, match="method 'dflash' on gdn is not modelled yet"):
        _plan("vllm serve Qwen/Qwen3.5-27B --speculative-config '{\"method\": \"dflash\", \"model\": \"x\"}'", 40)


@pytest.mark.parametrize("flags, message", [
    ("--max-model-len 99999999999", "--max-model-len: 99999999999 is outside -1..16,777,216"),
    ("-tp 0", "--tensor-parallel-size: 0 is outside 1..1,024"),
    ("--gpu-memory-utilization 1.5", "--gpu-memory-utilization: 1.5 is outside above 0 and at most 1"),
    ("--block-size 0", "--block-size: 0 is outside 1..16,777,216"),
])
def test_values_are_bounded_before_any_sizing(flags, message):
    with pytest.raises(BadInput, match=message.replace(".", r"\.").replace("(", r"\(")):
        ENGINE.parse_command(f"vllm serve Qwen/Qwen3.5-27B {flags}")


def test_a_non_default_args_line_is_bounded_too():
    with pytest.raises(BadInput, match="--max-num-seqs: 0 is outside"):
        ENGINE.parse_command("non-default args: {'model_tag': 'Qwen/Qwen3.5-27B', 'max_num_seqs': 0}")
    with pytest.raises(BadInput, match="not a vLLM 0.33.0 argument"):
        ENGINE.parse_command("non-default args: {'model_tag': 'Qwen/Qwen3.5-27B', 'no_such_flag': 1}")


@pytest.mark.parametrize(("typed", "tokens"), [("128k", 128_000), ("128K", 131_072), ("1M", 1_048_576),
                                               ("1m", 1_000_000), ("25.6k", 25_600), ("auto", -1), ("-1", -1)])
def test_lengths_read_with_vllms_own_suffixes(typed, tokens):
    """utils/argparse_utils.py::human_readable_int(_or_auto): k m g t decimal, K M G T binary (sglang's
    human_readable_int reads M as 10**6 and refuses K)."""
    for version in ("0.20.0", "0.33.0"):
        cmd = vllm_release(version).parse_command(f"vllm serve Qwen/Qwen3.5-27B --max-model-len {typed}")
        assert cmd.values["max_model_len"] == tokens


def test_a_decimal_binary_suffix_is_refused_with_vllms_words():
    with pytest.raises(BadInput, match="Decimals are not allowed with binary suffixes like K. Did you mean to use "
                                       "1.5k instead?"):
        vllm_release().parse_command("vllm serve Qwen/Qwen3.5-27B --max-model-len 1.5K")
    with pytest.raises(BadInput, match="invalid human_readable_int_or_auto value: 'long'"):
        vllm_release().parse_command("vllm serve Qwen/Qwen3.5-27B --max-model-len long")
