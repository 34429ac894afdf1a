"""Will a command boot and serve on a card, and if not, in which phase does it fail: the timeline's prediction.

Phases follow the boot order (the same names as verify.failures): `weights` (they do not fit in P), `state_pool` /
`kv_pool` (the engine refuses while sizing, too few state slots for the requests, or a KV pool smaller than one
request), `cuda_graph` (the slack cannot hold what capture allocates plus the margin) and `first_request` (it holds
the graphs but not the eager activations of the first prefill). Pure over the timeline and the engine's sizing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hybridplan.engine.verdict import Verdict
from hybridplan.errors import EngineRefusal
from hybridplan.hardware.catalog import GPU
from hybridplan.evidence import EvidencePoint, Probe, confidence
from hybridplan.engine.sglang.serving.timeline import MemoryTimeline

if TYPE_CHECKING:
    from hybridplan.engine.sglang.serving.loading import Loaded

BOOT_PHASES = ("weights", "state_pool", "kv_pool")
RUNTIME_PHASES = ("cuda_graph", "first_request")


# the numbers an sglang verdict shows, in this order (None where the boot does not get that far)
FIGURES = ("max_mamba_cache_size", "max_total_num_tokens", "max_running_requests", "slack_gib", "capture_need_gib",
           "serve_need_gib")


def _verdict(serves: bool, phase: str | None, why: str, **figures: Any) -> Verdict:
    """A verdict with every sglang figure named (capture_need_gib: what the slack must hold by the end of graph
    capture, with the margin; serve_need_gib: and once the first request runs)."""
    return Verdict(serves=serves, phase=phase, why=why, figures={k: figures.get(k) for k in FIGURES})


def _refusal_phase(message: str) -> str:
    """The pool an engine refusal while sizing is about (kv_cache_configurator.py's messages)."""
    m = message.lower()
    return "state_pool" if ("mamba" in m or "state" in m) else "kv_pool"


def predict(loaded: Loaded, tl: MemoryTimeline, *, request_tokens: int, concurrency: int = 1, gpu: GPU | None = None,
            evidence: Sequence[EvidencePoint] = ()) -> Verdict:
    """The verdict for a loaded command (loading.Loaded) whose timeline on the card is `tl`; with the card, its
    confidence from the measured launches in `evidence` (computed here once, carried by every layer above)."""
    v = _predict(loaded, tl, request_tokens=request_tokens, concurrency=concurrency)
    if gpu is None or gpu.generic:
        return v
    running = v.figure("max_running_requests") or loaded.args["max_running_requests"] or concurrency
    return replace(v, confidence=confidence(Probe.of(loaded.args, gpu, running), evidence))


def _predict(loaded: Loaded, tl: MemoryTimeline, *, request_tokens: int, concurrency: int) -> Verdict:
    if tl.available_gib.value <= 0:
        return _verdict(False, "weights", why=(
            f"the weights leave {tl.available_gib.value:.2f} GiB of the {tl.pre_load_gib.value:.2f} GiB free "
            "before loading"))
    try:
        s = tl.sizing()
    except EngineRefusal as exc:
        return _verdict(False, _refusal_phase(exc.message), f"the engine refuses: {exc.message}")
    sized: dict[str, Any] = {"max_mamba_cache_size": s.max_mamba_cache_size,
                             "max_total_num_tokens": s.max_total_num_tokens,
                             "max_running_requests": s.max_running_requests}
    if s.max_running_requests < concurrency and s.requests.binding == "state_pool":
        return _verdict(False, "state_pool", why=(
            f"K = {s.max_mamba_cache_size} state slots at S = {s.slots_per_request} admit {s.max_running_requests} "
            f"request(s), fewer than {concurrency}"), **sized)
    if s.max_total_num_tokens < request_tokens:
        return _verdict(False, "kv_pool", why=(
            f"the KV pool holds {s.max_total_num_tokens:,} tokens, less than one request of {request_tokens:,}"),
            **sized)
    serve_need, capture_need = tl.serve_need_gib, tl.capture_need_gib
    slack = tl.slack_gib.value
    numbers = {"slack_gib": slack, "capture_need_gib": capture_need, "serve_need_gib": serve_need, **sized}
    if slack < capture_need:
        return _verdict(False, "cuda_graph", why=(
            f"the {slack:.2f} GiB slack cannot hold the {capture_need:.2f} GiB that graph capture needs "
            f"(graphs, workspaces, tables and the {tl.margin_gib.value:.2f} GiB margin)"), **numbers)
    if slack < serve_need:
        return _verdict(False, "first_request", why=(
            f"the {slack:.2f} GiB slack holds the graphs but not the first request's activations "
            f"({serve_need:.2f} GiB with the margin)"), **numbers)
    return _verdict(True, None, why=(
        f"the {slack:.2f} GiB slack holds the {serve_need:.2f} GiB graphs, activations and margin need"), **numbers)
