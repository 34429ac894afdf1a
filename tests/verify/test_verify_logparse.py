"""The boot-log parser on the real fixture logs, on synthetic ones written from the engine's format strings, and on
every prefix and wrapping the engine (or a terminal) produces."""

from __future__ import annotations

import json
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridplan.engine.sglang.logparse import KEYS, parse_log
from tests.conftest import FIXTURES

LOGS = FIXTURES / "logs"
SYNTH = LOGS / "synthetic"


def _parse(path) -> dict:
    return parse_log(path.read_text()).as_dict()


def test_rtx4090_tp2_dev_build_exact():
    got = _parse(LOGS / "qwen3.5-9b-tp2-rtx4090.log")
    tp0 = {
        "pre_load_avail_gib": 22.93, "weights_gib": 8.85, "avail_after_load_gib": 14.08,
        "max_mamba_cache_size": 186, "conv_state_gib": 0.10, "ssm_state_gib": 4.38, "kv_dtype": "torch.bfloat16",
        "kv_tokens": 327310, "k_gib": 2.50, "v_gib": 2.50, "max_total_num_tokens": 327310,
        "max_running_requests": 62, "context_len": 262144, "cuda_graph_gib": 0.26, "avail_after_pools_gib": 4.49,
    }
    # TP1 logs neither the KV dtype line nor the scheduler summary (tp_rank 0 only)
    tp1 = {k: v for k, v in tp0.items()
           if k not in ("kv_dtype", "max_total_num_tokens", "max_running_requests", "context_len")}
    assert got == {**tp0, "ranks": {"TP1": tp1, "TP0": tp0}}
    assert list(got) == [k for k in KEYS if k in got] + ["ranks"]


def test_mi355x_state_cache_refusal_exact():
    assert _parse(LOGS / "qwen3.8-27b-fp8-mi355x-state-cache-failure.log") == {"failure": {
        "phase": "state_pool",
        "message": "RuntimeError: Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed "
                   "max_mamba_cache_size=-28 (total_rest_memory=-7.96 GB, mamba_cache_per_req=146.81 MB)."}}


def test_gb10_not_enough_memory_exact():
    assert _parse(LOGS / "nemotron3-ultra-gb10-not-enough-memory.log") == {"failure": {
        "phase": "kv_pool", "message": "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."}}


OK_BOOT = {
    "pre_load_avail_gib": 30.84, "weights_gib": 16.48, "avail_after_load_gib": 14.36, "max_mamba_cache_size": 35,
    "conv_state_gib": 0.10, "ssm_state_gib": 5.06, "kv_dtype": "torch.float8_e4m3fn", "kv_tokens": 197163,
    "k_gib": 3.01, "v_gib": 3.01, "max_total_num_tokens": 197163, "max_running_requests": 1, "context_len": 262144,
    "cuda_graph_gib": 0.44, "avail_after_pools_gib": 3.17,
}


def test_synthetic_0523_boot_parses_every_key():
    assert _parse(SYNTH / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-ok.log") == OK_BOOT


@pytest.mark.parametrize("case, phase, starts", [
    ("cuda-graph-oom", "cuda_graph", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.25 GiB"),
    ("first-request-oom", "first_request", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.32 GiB"),
    ("weights-oom", "weights", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 170.00 MiB"),
    ("killed", "killed", "Killed"),
])
def test_failure_phases(case, phase, starts):
    got = _parse(SYNTH / f"sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-{case}.log")
    assert got["failure"]["phase"] == phase
    assert got["failure"]["message"].startswith(starts)


def test_a_capture_oom_is_named_by_the_oom_not_the_assert_it_chained():
    """torch raises its capture assert while handling the OOM (`During handling of the above exception`): the OOM is
    the failure, the assert what was raised after it; the phase stays the capture's."""
    got = _parse(SYNTH / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-cuda-graph-oom.log")["failure"]
    assert got["phase"] == "cuda_graph" and "Tried to allocate 1.25 GiB" in got["message"]
    assert got["chained"].startswith("RuntimeError: num_active_captures_ > 0 INTERNAL ASSERT FAILED")
    unchained = (SYNTH / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-first-request-oom.log")
    assert "chained" not in _parse(unchained)["failure"]


@pytest.mark.parametrize("between, root", [
    ("During handling of the above exception, another exception occurred:", "torch.OutOfMemoryError"),
    ("\nThe above exception was the direct cause of the following exception:\n", "torch.OutOfMemoryError"),
    ("", "RuntimeError: num_active_captures_"),  # no separator: two tracebacks, not one chain
])
def test_only_a_chain_separator_leads_back_to_a_root(between, root):
    """Python prints the root's traceback, a separator, then the exception raised while handling it (a paste may
    run the root and the separator into one record)."""
    from hybridplan.engine.sglang.logparse import parse_log

    text = "\n".join(["[2026-08-22 10:00:42] Capture target prefill CUDA graph begin. backend=breakable",
                      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.", between,
                      "Traceback (most recent call last):", '  File "graphs.py", line 88, in capture_end',
                      "RuntimeError: num_active_captures_ > 0 INTERNAL ASSERT FAILED at x.cpp:1"])
    failure = parse_log(text).rank0.failure
    assert failure is not None and failure.phase == "cuda_graph" and failure.message.startswith(root)
    assert (failure.chained is not None) == bool(between) and "During" not in failure.message


def test_failure_keeps_what_the_boot_logged_before_it():
    got = _parse(SYNTH / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-cuda-graph-oom.log")
    assert got["max_mamba_cache_size"] == 35 and got["kv_tokens"] == 197163
    assert "cuda_graph_gib" not in got and "max_running_requests" not in got


def test_hard_wrapped_four_rank_log():
    boot = parse_log((SYNTH / "sglang-0.5.23-qwen3.5-9b-tp2-pp2-wrapped.log").read_text())
    assert list(boot.ranks) == ["PP0 TP0", "PP0 TP1", "PP1 TP0", "PP1 TP1"]
    assert boot.rank0_tag == "PP0 TP0"
    r0 = boot.as_dict()
    assert (r0["kv_tokens"], r0["k_gib"], r0["max_mamba_cache_size"], r0["max_running_requests"]) == (
        1013010, 3.86, 578, 144)
    assert boot.min_over_ranks("avail_after_load_gib") == 18.21
    assert boot.ranks["PP1 TP0"].weights_gib == 4.72
    assert boot.rank0.mm_reservation_gib == 0.10 and boot.rank0.capped_slots_per_request == 4


# every bundled log that is not itself wrapped: the three real ones and the synthetic 0.5.23 boots and failures
WRAP_CASES = sorted(LOGS.glob("*.log")) + sorted(p for p in SYNTH.glob("*.log") if "wrapped" not in p.name)


def _hard(text: str, width: int) -> str:
    """A terminal's hard wrap: every line cut at `width` columns, inside words and numbers alike."""
    return "\n".join(line[i:i + width] for line in text.splitlines() for i in range(0, max(len(line), 1), width))


@settings(max_examples=60, deadline=None)
@given(width=st.integers(min_value=40, max_value=200), path=st.sampled_from(WRAP_CASES))
def test_terminal_hard_wrap_does_not_change_the_parse(width, path):
    text = path.read_text()
    assert parse_log(_hard(text, width)).as_dict() == parse_log(text).as_dict()


@settings(max_examples=60, deadline=None)
@given(width=st.integers(min_value=40, max_value=200), path=st.sampled_from(WRAP_CASES),
       long_words=st.booleans())
def test_word_wrap_does_not_change_the_parse(width, path, long_words):
    """An editor's or issue tracker's wrap: at spaces, after hyphens, and (long_words) inside words too long for
    the width."""
    text = path.read_text()
    wrapped = "\n".join(textwrap.fill(line, width, break_long_words=long_words, break_on_hyphens=long_words)
                        for line in text.splitlines())
    assert parse_log(wrapped).as_dict() == parse_log(text).as_dict()


def test_every_width_of_the_real_logs():
    """The three real logs at every width 40..200, both wraps (the property tests above sample)."""
    for path in sorted(LOGS.glob("*.log")):
        text = path.read_text()
        expected = parse_log(text).as_dict()
        for width in range(40, 201):
            assert parse_log(_hard(text, width)).as_dict() == expected, (path.name, width)
            wrapped = "\n".join(textwrap.fill(line, width) for line in text.splitlines())
            assert parse_log(wrapped).as_dict() == expected, (path.name, width)


def test_messages_run_together_on_one_line():
    """A comment box that joined the lines: each `[time rank]` prefix starts a message again."""
    text = (LOGS / "qwen3.5-9b-tp2-rtx4090.log").read_text()
    assert parse_log(" ".join(text.splitlines())).as_dict() == parse_log(text).as_dict()


@pytest.mark.parametrize("prefix, tag", [
    ("[TP0] ", "TP0"),
    ("[2026-08-22 10:00:00 TP0] ", "TP0"),
    ("[2026-08-22 10:00:00.123 DP0 TP0] ", "DP0 TP0"),
    ("[2026-08-22 10:00:00 DP0 PP0 ATTN_CP0 MOE_DP0 TP0 EP0] ", "DP0 PP0 ATTN_CP0 MOE_DP0 TP0 EP0"),
    ("sglang-1  | [2026-08-22 10:00:00 TP0] ", "TP0"),
    ("\x1b[32m[2026-08-22 10:00:00 TP0]\x1b[0m ", "TP0"),
])
def test_rank_prefixes(prefix, tag):
    other = prefix.replace("0]", "1]").replace("0\x1b", "1\x1b")
    lines = [f"{p}Mamba Cache is allocated. max_mamba_cache_size: 7, conv_state size: 0.01GB, ssm_state size: 0.50GB "
             for p in (prefix, other)]
    boot = parse_log("\n".join(lines))
    assert boot.rank0_tag == tag
    assert boot.as_dict()["max_mamba_cache_size"] == 7 and len(boot.ranks) == 2


# The engine's own format strings (memory_pool.py, model_runner.py, scheduler.py), filled with generated values.
def _engine_lines(K, conv, ssm, issm, iconv, dtype, T, k, v, mrr, ctx, begin, end, usage):
    mamba = (f"Mamba Cache is allocated. max_mamba_cache_size: {K}, conv_state size: {conv:.2f}GB, "
             f"ssm_state size: {ssm:.2f}GB ")
    if issm is not None:
        mamba += (f"intermediate_ssm_state_cache size: {issm:.2f}GB "
                  f"intermediate_conv_window_cache size: {iconv:.2f}GB ")
    return [
        f"Load weight begin. avail mem={begin:.2f} GB",
        f"Load weight end. elapsed=12.34 s, type=Qwen3_5ForConditionalGeneration, quant=fp8, fmt=e4m3, "
        f"avail mem={end:.2f} GB, mem usage={usage:.2f} GB.",
        mamba,
        f"KV Cache is allocated. dtype: torch.{dtype}, #tokens: {T}, K size: {k:.2f} GB, V size: {v:.2f} GB",
        f"max_total_num_tokens={T}, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        f"max_running_requests={mrr}, context_len={ctx}, available_gpu_mem=3.21 GB",
    ]


gib = st.floats(min_value=0, max_value=500, allow_nan=False).map(lambda x: round(x, 2))


@settings(max_examples=60, deadline=None)
@given(K=st.integers(1, 10**5), conv=gib, ssm=gib, spec=st.booleans(), issm=gib, iconv=gib,
       dtype=st.sampled_from(["bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn_x2"]),
       T=st.integers(1, 10**8), k=gib, v=gib, mrr=st.integers(1, 4096), ctx=st.integers(1, 10**7),
       begin=gib, end=gib, usage=gib)
def test_engine_format_round_trip(K, conv, ssm, spec, issm, iconv, dtype, T, k, v, mrr, ctx, begin, end, usage):
    lines = _engine_lines(K, conv, ssm, issm if spec else None, iconv, dtype, T, k, v, mrr, ctx, begin, end, usage)
    boot = parse_log("\n".join(f"[2026-08-22 10:00:00 TP0] {line}" for line in lines))
    assert boot.as_dict() == {
        "pre_load_avail_gib": begin, "weights_gib": usage, "avail_after_load_gib": end, "max_mamba_cache_size": K,
        "conv_state_gib": conv, "ssm_state_gib": ssm, "kv_dtype": f"torch.{dtype}", "kv_tokens": T, "k_gib": k,
        "v_gib": v, "max_total_num_tokens": T, "max_running_requests": mrr, "context_len": ctx}
    assert boot.rank0.intermediate_ssm_gib == (issm if spec else None)


def test_mla_kv_line_reports_one_size():
    boot = parse_log("[2026-08-22 10:00:00] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 90112, KV size: 5.99 GB")
    assert boot.as_dict() == {"kv_dtype": "torch.bfloat16", "kv_tokens": 90112, "k_gib": 5.99}


def test_draft_lines_do_not_replace_the_target_ones():
    text = "\n".join([
        "Load weight begin. avail mem=79.10 GB",
        "Load weight end. elapsed=30.00 s, type=Qwen3NextForCausalLM, avail mem=40.00 GB, mem usage=39.10 GB.",
        "Load weight begin. avail mem=40.00 GB",
        "Load weight end. elapsed=2.00 s, type=Qwen3NextForCausalLMMTP, avail mem=38.50 GB, mem usage=1.50 GB.",
        "Mamba Cache is allocated. max_mamba_cache_size: 900, conv_state size: 0.37GB, ssm_state size: 15.84GB "
        "intermediate_ssm_state_cache size: 3.45GB intermediate_conv_window_cache size: 0.04GB ",
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1000000, K size: 5.72 GB, V size: 5.72 GB",
        "Memory pool end. avail mem=7.10 GB",
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1000000, K size: 0.48 GB, V size: 0.48 GB",
        "Memory pool end. avail mem=6.10 GB",
        "Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=4, avail mem=6.10 GB",
        "Capture target verify CUDA graph end. bs=[1, 2, 4], elapsed=3.00 s, mem usage=0.50 GB, avail mem=5.60 GB.",
        "Capture draft decode CUDA graph end. elapsed=1.00 s, mem usage=0.25 GB, avail mem=5.35 GB.",
        "Memory pool end. avail mem=5.00 GB",
    ])
    r = parse_log("\n".join(f"[2026-08-22 10:00:00] {line}" for line in text.splitlines())).rank0
    assert (r.pre_load_avail_gib, r.avail_after_load_gib, r.weights_gib) == (79.10, 38.50, 40.60)
    assert (r.k_gib, r.kv_tokens) == (5.72, 1000000)
    assert r.avail_after_pools_gib == 6.10  # after the draft's pool, before capture
    assert r.cuda_graph_gib == 0.75
    assert (r.intermediate_ssm_gib, r.intermediate_conv_window_gib) == (3.45, 0.04)


@pytest.mark.parametrize("lines, mrr", [
    (["max_running_requests is capped to 9 by the mamba state cache (max_mamba_cache_size=46, 5 state slots per "
      "request). To raise it: increase --mamba-full-memory-ratio or --max-mamba-cache-size, or halve the state size "
      "with --mamba-ssm-dtype bfloat16."], 9),
    (["max_running_requests was reduced from the requested 48 to 12 (per dp worker) due to the available KV cache "
      "capacity."], 12),
    (["max_running_requests is capped to 9 by the mamba state cache (max_mamba_cache_size=46, 5 state slots per "
      "request).", "Post-capture KV sizing: max_running_requests 9 -> 6"], 6),
    (["max_running_requests is capped to 9 by the mamba state cache (max_mamba_cache_size=46, 5 state slots per "
      "request).", "max_total_num_tokens=1000, chunked_prefill_size=2048, max_prefill_tokens=16384, "
      "max_running_requests=8, context_len=4096, available_gpu_mem=1.00 GB"], 8),
])
def test_effective_max_running_requests(lines, mrr):
    assert parse_log("\n".join(f"[2026-08-22 10:00:00] {x}" for x in lines)).as_dict()["max_running_requests"] == mrr


def test_an_exception_the_boot_survived_is_not_a_failure():
    text = "\n".join([
        "[2026-08-22 10:00:00 TP0] Load weight begin. avail mem=22.93 GB",
        "RuntimeError: custom allreduce is not supported without P2P",
        "[2026-08-22 10:00:05 TP0] Load weight end. elapsed=5.46 s, type=X, avail mem=14.08 GB, mem usage=8.85 GB.",
    ])
    assert "failure" not in parse_log(text).as_dict()


def test_a_failure_on_another_rank_is_reported_for_rank0():
    text = "\n".join([
        "[2026-08-22 10:00:00 TP0] Load weight begin. avail mem=22.93 GB",
        "[2026-08-22 10:00:00 TP1] Load weight begin. avail mem=22.93 GB",
        "[2026-08-22 10:00:03 TP1] Scheduler hit an exception: Traceback (most recent call last):",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.",
    ])
    got = parse_log(text).as_dict()
    assert got["failure"] == {"phase": "weights", "message": "torch.OutOfMemoryError: CUDA out of memory. "
                                                            "Tried to allocate 1.00 GiB."}
    assert got["ranks"]["TP1"]["failure"]["phase"] == "weights"


def test_fixture_sidecars_describe_synthetic_logs():
    for meta in SYNTH.glob("*.log.json"):
        data = json.loads(meta.read_text())
        assert data["synthetic"] is True and data["launch"]["command_verbatim"]
        assert meta.with_suffix("").read_text().startswith("# SYNTHETIC")


def test_older_release_formats():
    """Lines as 0.4.x / early 0.5.x printed them: no dtype on the KV line, no K on the Mamba line, the old capture
    wording, a `[TP0]`-only prefix."""
    text = "\n".join([
        "[TP0] Load weight begin. avail mem=78.50 GB",
        "[TP0] Load weight end. type=Qwen3NextForCausalLM, dtype=torch.bfloat16, avail mem=41.20 GB, mem usage=37.30 GB.",
        "[TP0] Mamba Cache is allocated. conv_state size: 0.52GB, ssm_state size: 22.31GB",
        "[TP0] KV Cache is allocated. #tokens: 812345, K size: 4.65 GB, V size: 4.65 GB",
        "[TP0] Memory pool end. avail mem=8.10 GB",
        "[TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=8.05 GB",
        "[TP0] Capture cuda graph end. Time elapsed: 12.31 s. mem usage=0.61 GB. avail mem=7.44 GB.",
        "[TP0] max_total_num_tokens=812345, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        "max_running_requests=48, context_len=262144",
    ])
    assert parse_log(text).as_dict() == {
        "pre_load_avail_gib": 78.5, "weights_gib": 37.3, "avail_after_load_gib": 41.2, "conv_state_gib": 0.52,
        "ssm_state_gib": 22.31, "kv_tokens": 812345, "k_gib": 4.65, "v_gib": 4.65, "max_total_num_tokens": 812345,
        "max_running_requests": 48, "context_len": 262144, "cuda_graph_gib": 0.61, "avail_after_pools_gib": 8.1}
