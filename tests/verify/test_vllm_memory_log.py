"""`logs check --engine vllm` reads the memory lines of a vLLM boot (the startup memory summary, the CUDA-graph
estimate, `Model loading took`): the requested memory and each worker's KV memory against vLLM's own arithmetic
(gpu_worker.py::determine_available_memory), and the card-alone timeline beside what the boot measured."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from hybridplan.engine.vllm.serving.memory_log import AVAILABLE_RULE, exact_checks, parse_memory

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vllm"
# noonghunna/club-3090#1087: the two workers' startup summaries and one graph-pool line, as posted (no args line)
LOG_1087 = FIXTURES / "club3090-1087-2x5090-memory.log"
# the dual compose's launch the excerpt does not show (TP 2 on two RTX 5090s at 0.92, as the summary says)
LAUNCH_1087 = ["vllm", "serve", "Qwen/Qwen3.8-27B-FP8", "--quantization", "fp8", "-tp", "2", "--max-model-len",
               "262144", "--gpu-memory-utilization", "0.92", "--max-num-seqs", "2", "--max-num-batched-tokens", "8192",
               "--kv-cache-dtype", "fp8", "--enable-prefix-caching"]
GIB = 1 << 30


def test_club3090_1087_summary_is_vllms_own_arithmetic(cli_json):
    """Worker TP1 holds the least KV memory (12.24 GiB, every rank is planned to it): 28.88 requested - 15.05 consumed
    - 1.59 peak activation (its release folds the 0.13 GiB graph estimate into the peak); 28.88 = ceil(31.4 x 0.92)."""
    code, d = cli_json("logs", "check", "--engine", "vllm", "--gpu", "rtx5090", "--json", str(LOG_1087), "--",
                       *LAUNCH_1087)
    assert code == 0 and d["explained"] and d["available_kv_gib"] == 12.24
    rows = {c["quantity"]: c for c in d["checks"]}
    assert rows["requested_gib"]["match"] and rows["requested_gib"]["logged"] == 28.88
    assert 28.88 in rows["requested_gib"]["predicted"]
    assert rows["kv_cache_memory_gib"] == {"quantity": "kv_cache_memory_gib", "predicted": 12.24, "logged": 12.24,
                                           "match": True, "how": "requested - consumed - peak activation"}
    mem = d["memory"]
    assert (mem["summary"]["consumed"], mem["summary"]["peak_activation"], mem["cudagraph_estimate_gib"]) == \
        (15.05, 1.59, 0.13)
    terms = {t["term"]: t for t in mem["estimates"]["terms"]}
    # the catalog's RTX 5090 torch total (31.36 GiB, from the cookbook's OOM message) against this boot's 31.4
    assert (terms["total"]["estimate_gib"], terms["total"]["logged_gib"], terms["total"]["error_gib"]) == \
        (31.36, 31.4, -0.04)
    assert terms["consumed"]["logged_gib"] == 15.05 and terms["weights"]["logged_gib"] is None
    assert terms["available"]["logged_gib"] == 12.24


def test_a_summary_that_does_not_add_up_names_the_rule(cli_json, tmp_path):
    text = LOG_1087.read_text().replace("15.05 GiB for consumed", "15.25 GiB for consumed")
    log = tmp_path / "boot.log"
    log.write_text(text)
    code, d = cli_json("logs", "check", "--engine", "vllm", "--json", str(log), "--", *LAUNCH_1087)
    row = next(c for c in d["checks"] if c["quantity"] == "kv_cache_memory_gib")
    assert code == 1 and not d["explained"]
    assert (row["predicted"], row["logged"], row["rule"]) == (12.04, 12.24, AVAILABLE_RULE)


def _gib(b: int) -> str:
    return f"{round(b / GIB, 2)}"  # vLLM's format_gib


def _old_form(total: int, util: float, weights: int, non_torch: int, peak: int, graph: int,
              estimate: int | None) -> tuple[str, int]:
    """A summary as 0.24.0-0.26 print it (weights, peak, non-torch and graphs apart) and the KV memory it states."""
    requested = math.ceil(total * util)
    kv = requested - weights - non_torch - peak - (estimate or 0)
    lines = [] if estimate is None else [
        f"INFO [gpu_worker.py:668] CUDA graph pool memory: {_gib(graph)} GiB (actual), {_gib(estimate)} GiB "
        "(estimated), difference: 0.0 GiB (0.0%)."]
    lines.append(f"INFO [gpu_worker.py:710] Free memory on device ({_gib(total - 2**28)}/{_gib(total)} GiB) on startup. "
                 f"Desired GPU memory utilization is ({util}, {_gib(requested)} GiB). Actual usage is {_gib(weights)} "
                 f"GiB for weight, {_gib(peak)} GiB for peak activation, {_gib(non_torch)} GiB for non-torch memory, "
                 f"and {_gib(graph)} GiB for CUDAGraph memory. Replace gpu_memory_utilization config with "
                 f"`--kv-cache-memory=1` (0.0 GiB) to fit into requested memory, or `--kv-cache-memory=2` (0.0 GiB) "
                 f"to fully utilize gpu memory. Current kv cache memory in use is {_gib(kv)} GiB.")
    return "\n".join(lines), kv


@given(total=st.integers(16 * GIB, 200 * GIB), util=st.sampled_from([0.5, 0.8, 0.85, 0.9, 0.92, 0.95]),
       weights=st.integers(1 * GIB, 60 * GIB), non_torch=st.integers(0, 2 * GIB), peak=st.integers(0, 8 * GIB),
       graph=st.integers(0, 2 * GIB), estimated=st.booleans())
def test_any_summary_vllm_prints_is_read_back_and_adds_up(total, util, weights, non_torch, peak, graph, estimated):
    text, kv = _old_form(total, util, weights, non_torch, peak, graph, graph if estimated else None)
    if kv <= 0:
        return
    log = parse_memory(text)
    assert log.summary is not None and log.summary.weights == float(_gib(weights))
    assert log.cudagraph_estimate == (float(_gib(graph)) if estimated else None)
    assert all(c["match"] for c in exact_checks(log)) and len(exact_checks(log)) == 2


def test_an_estimate_the_release_did_not_apply_stays_in_the_kv_memory():
    """Before v0.21 the graph estimate was logged but not taken (`... will be enabled by default`)."""
    text, _ = _old_form(80 * GIB, 0.9, 30 * GIB, GIB // 2, 2 * GIB, GIB, None)
    applied_text, _ = _old_form(80 * GIB, 0.9, 30 * GIB, GIB // 2, 2 * GIB, GIB, GIB)
    note = ("INFO [gpu_worker.py:470] In v0.19, CUDA graph memory profiling will be enabled by default "
            "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1)\nINFO Estimated CUDA graph memory: 1.0 GiB total\n")
    not_applied = parse_memory(note + text)
    assert not not_applied.estimate_applied and not_applied.cudagraph_estimate == 1.0
    assert all(c["match"] for c in exact_checks(not_applied))
    assert parse_memory(applied_text).estimate_applied and all(c["match"] for c in exact_checks(parse_memory(applied_text)))
