"""The memory lines of a vLLM boot log (`Model loading took`, the startup memory summary) held against vLLM's own
arithmetic (exact, up to the log's two-decimal rounding) and against hybridplan's card-alone timeline
(engine/vllm/serving/memory.py: estimates, each shown with its error).

The summary line (v1/worker/gpu_worker.py::Worker.compile_or_warm_up_model) comes in two forms: 0.24.0 splits the
usage into weights, peak activation, non-torch memory and CUDA graphs; later releases into consumed memory (weights
+ non-torch), peak activation (with the CUDA-graph estimate folded in) and CUDA graphs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hybridplan.engine import numbers
from hybridplan.engine.numbers import Bound
from hybridplan.limits import MAX_GPU_GIB
from hybridplan.provenance import Source

if TYPE_CHECKING:
    from hybridplan.engine.vllm.planning import VllmArgs

# a number's text: digits and dots (commas too, for the reader to judge), at most one character past
# numbers.MAX_NUMBER_CHARS; every repeat bounded, so a search is linear in the log's size
_NUM = r"[0-9.,]{1,41}"
_LOADING = re.compile(rf"Model loading took ({_NUM}) GiB memory")
_SUMMARY = re.compile(
    rf"Free memory on device \((?P<free>{_NUM})/(?P<total>{_NUM}) GiB\) on startup\. Desired GPU memory utilization is "
    rf"\((?P<util>{_NUM}), (?P<requested>{_NUM}) GiB\)\. Actual usage is (?:(?P<consumed>{_NUM}) GiB for consumed "
    rf"memory \(weights \+ non-torch\), (?P<peak>{_NUM}) GiB for peak activation, and (?P<graph>{_NUM}) GiB for "
    rf"CUDAGraph memory|(?P<weights>{_NUM}) GiB for weight, (?P<peak_old>{_NUM}) GiB for peak activation, "
    rf"(?P<non_torch>{_NUM}) GiB for non-torch memory, and (?P<graph_old>{_NUM}) GiB for CUDAGraph memory)\.[^\n]{{0,1024}}?"
    rf"Current kv cache memory in use is (?P<kv>{_NUM}) (?P<kv_unit>GiB|bytes)")
_GRAPH_ESTIMATE = re.compile(rf"CUDA graph pool memory: {_NUM} GiB \(actual\), (?P<est>{_NUM}) GiB \(estimated\)"
                             rf"|Estimated CUDA graph memory: (?P<total>{_NUM}) GiB total")
# the release tells whether the graph estimate came out of the KV memory (gpu_worker.py::determine_available_memory:
# VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, on by default from v0.21 in its own words, off before)
_ESTIMATE_NOT_APPLIED = re.compile(r"CUDA graph memory profiling will be enabled by default|CUDA graph memory "
                                   r"profiling is disabled")
_GIB = Bound(0.0, MAX_GPU_GIB, "GiB on one GPU")
_BYTES = Bound(0, int(MAX_GPU_GIB) << 30, "bytes on one GPU")
_UTILIZATION = Bound(0.0, 1.0, "a fraction of GPU memory")
GIB = 1 << 30
ROUNDING = 0.005  # format_gib (utils/mem_utils.py): round(bytes / GiB, 2)

REQUESTED_RULE = "v1/worker/utils.py::request_memory (ceil(total x gpu_memory_utilization))"
AVAILABLE_RULE = ("v1/worker/gpu_worker.py::Worker.determine_available_memory (requested - non-KV memory - the "
                  "CUDA-graph estimate)")


@dataclass(frozen=True, kw_only=True)
class MemorySummary:
    """One worker's startup memory summary, in GiB as logged (None: a term this release's line does not print)."""

    free: float
    total: float
    utilization: float
    requested: float
    consumed: float | None  # weights + non-torch (0.25 and later)
    weights: float | None  # 0.24.0 prints weights ...
    non_torch: float | None  # ... and non-torch memory apart
    peak_activation: float
    cudagraph: float  # captured (actual)
    kv_in_use: float


@dataclass(frozen=True, kw_only=True)
class MemoryLog:
    """The memory lines a vLLM boot log states."""

    model_loading: float | None  # the smallest rank's `Model loading took X GiB`
    summary: MemorySummary | None  # the worker with the least KV memory (the one every rank is planned to)
    cudagraph_estimate: float | None  # the CUDA-graph estimate (`... (estimated)` or `Estimated CUDA graph memory`)
    estimate_applied: bool  # whether that estimate was taken from the KV memory (the log says when it was not)


def _gib(text: str, field: str) -> float:
    return float(numbers.read(text, field, _GIB, integer=False))


def parse_memory(text: str) -> MemoryLog:
    """The memory lines of a vLLM boot log (every worker prints its own; the smallest KV memory is kept); every
    number read by engine/numbers.py (BadInput names the line's field)."""
    loading = [_gib(x, "Model loading took") for x in _LOADING.findall(text)]
    summaries = [_summary(m) for m in _SUMMARY.finditer(text)]
    graphs = [_gib(m.group("est") or m.group("total"), "CUDA graph memory estimate")
              for m in _GRAPH_ESTIMATE.finditer(text)]
    summary = min(summaries, key=lambda s: s.kv_in_use) if summaries else None
    return MemoryLog(model_loading=min(loading) if loading else None, summary=summary,
                     cudagraph_estimate=max(graphs) if graphs else None,
                     estimate_applied=_ESTIMATE_NOT_APPLIED.search(text) is None)


def _summary(m: re.Match[str]) -> MemorySummary:
    def num(*names: str) -> float | None:
        name = next((n for n in names if m.group(n) is not None), None)
        return None if name is None else _gib(m.group(name), f"startup memory summary: {names[0]}")

    def gib(*names: str) -> float:
        value = num(*names)
        assert value is not None  # each alternative of the pattern holds one of the names
        return value

    bytes_ = m.group("kv_unit") == "bytes"
    kv = numbers.read(m.group("kv"), "startup memory summary: kv cache memory in use", _BYTES if bytes_ else _GIB,
                      integer=bytes_)
    return MemorySummary(free=gib("free"), total=gib("total"),
                         utilization=float(numbers.read(m.group("util"), "startup memory summary: utilization",
                                                        _UTILIZATION, integer=False)),
                         requested=gib("requested"), consumed=num("consumed"), weights=num("weights"),
                         non_torch=num("non_torch"), peak_activation=gib("peak", "peak_old"),
                         cudagraph=gib("graph", "graph_old"), kv_in_use=kv / GIB if bytes_ else float(kv))


def _f(x: float | None) -> float:
    assert x is not None  # the old form's groups are all present together
    return x


def exact_checks(log: MemoryLog) -> list[dict[str, Any]]:
    """One worker's summary against vLLM's own arithmetic: the requested memory from the logged total and
    utilization, and that worker's KV memory from the logged terms (each rounded to 0.01 GiB, so the tolerance grows
    with their number). Rows as vllm_check's: quantity, predicted, logged, match, and the rule when they differ."""
    s = log.summary
    if s is None:
        return []
    # the total lies in [T - 0.005, T + 0.005) GiB: ceil(total x u) rounds to any two-decimal value in that span
    low, high = (s.total - ROUNDING) * s.utilization, (s.total + ROUNDING) * s.utilization
    spans = sorted({round(low, 2), round(high, 2)})
    rows = [_row("requested_gib", spans if len(spans) > 1 else spans[0], s.requested,
                 low < s.requested + ROUNDING and high >= s.requested - ROUNDING, REQUESTED_RULE,
                 f"ceil({s.total:g} GiB x {s.utilization:g})")]
    if s.consumed is not None:  # the graph estimate is inside the logged peak activation
        terms, how = [s.consumed, s.peak_activation], "requested - consumed - peak activation"
    elif log.cudagraph_estimate is not None and log.estimate_applied:
        terms = [_f(s.weights), _f(s.non_torch), s.peak_activation, log.cudagraph_estimate]
        how = "requested - weights - non-torch - peak activation - CUDA-graph estimate"
    else:  # no estimate taken: none made (every estimate is logged beside the captured pool) or the log says so
        terms, how = [_f(s.weights), _f(s.non_torch), s.peak_activation], \
            "requested - weights - non-torch - peak activation (no CUDA-graph estimate taken from it)"
    predicted = round(s.requested - sum(terms), 2)
    tolerance = ROUNDING * (len(terms) + 2)
    rows.append(_row("kv_cache_memory_gib", predicted, round(s.kv_in_use, 2),
                     abs(predicted - s.kv_in_use) <= tolerance + 1e-9, AVAILABLE_RULE, how))
    return rows


def _row(quantity: str, predicted: float | list[float], logged: float, match: bool, rule: str,
         how: str) -> dict[str, Any]:
    return {"quantity": quantity, "predicted": predicted, "logged": logged, "match": match,
            "how": how} | ({} if match else {"rule": rule})


def estimates(log: MemoryLog, args: "VllmArgs", gpu: str, quantization: str | None,
              available_kv_gib: float) -> dict[str, Any]:
    """hybridplan's card-alone timeline term by term beside what the log measured, in the split the log's release
    prints (`error_gib`: estimate - logged); `terms` is empty with a `note` when the estimate finds no KV memory."""
    from hybridplan.hardware.catalog import from_options
    from hybridplan.engine.vllm.serving.memory import GIB, from_card

    card = from_options(gpu, None)
    if card is None:
        return {"terms": [], "note": f"{gpu}: not a catalog card"}
    tl = from_card(args, card, quantization)
    if tl.available.value <= 0:
        return {"terms": [], "note": (
            f"--gpu {gpu}: the weights ({tl.weights.value / GIB:.2f} GiB per rank) and runtime leave no KV memory at "
            f"gpu_memory_utilization {args.gpu_memory_utilization:g} (vLLM: 'No available memory for the cache "
            "blocks')")}
    s = log.summary
    loaded = log.model_loading if log.model_loading is not None else (s.weights if s else None)
    terms: list[tuple[str, int, float | None, str, str]] = [
        ("total", tl.total.value, s.total if s else None, tl.total.source.value, tl.total.note),
        ("weights", tl.weights.value, loaded, tl.weights.source.value, tl.weights.note)]
    if s is not None and s.consumed is not None:  # later releases: consumed = weights + non-torch; graphs in the peak
        terms += [("non_torch", tl.overhead.value, None if loaded is None else round(s.consumed - loaded, 2),
                   tl.overhead.source.value, tl.overhead.note),
                  ("consumed", tl.weights.value + tl.overhead.value, s.consumed, Source.ESTIMATE.value,
                   "weights + non-torch estimates, as this release logs them together"),
                  ("peak_activation", tl.activation.value + tl.cudagraph.value, s.peak_activation,
                   Source.ESTIMATE.value, "activation + CUDA-graph estimates, as this release logs the peak: "
                   + tl.activation.note)]
    else:
        terms += [("non_torch", tl.overhead.value, s.non_torch if s else None, tl.overhead.source.value,
                   tl.overhead.note),
                  ("peak_activation", tl.activation.value, s.peak_activation if s else None,
                   tl.activation.source.value, tl.activation.note),
                  ("cudagraph_estimate", tl.cudagraph.value, log.cudagraph_estimate, tl.cudagraph.source.value,
                   tl.cudagraph.note)]
    terms.append(("available", tl.available.value, available_kv_gib, tl.available.source.value, tl.available.note))
    return {"terms": [{"term": name, "estimate_gib": round(value / GIB, 2), "logged_gib": logged,
                       "error_gib": None if logged is None else round(value / GIB - logged, 2),
                       "source": source, "note": note}
                      for name, value, logged, source, note in terms], "note": None}
