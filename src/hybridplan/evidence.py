"""What measured launches say about a --mem-fraction-static: the evidence a plan's fraction and a verdict's confidence
rest on.

Evidence points (a cookbook page's `records:` and measured cells, the public boot logs, launch reports) reach the
planner from its caller as an `EvidenceSource`; the planner never reads them itself (layers: commands|web hand in the
lookup, as they hand in `FailureLookup`; hybridplan.calibration.sources lists every source). The rule, in
docs/calibration.md ("Margin rule"):

- the baseline is the engine's own default fraction for the command (the release's rule);
- without comparable evidence the fraction stays within max(engine default + 0.05, 0.90);
- a launch that served on the same card, or a smaller card of the same architecture (its fraction left less slack),
  supports its own fraction less STEP per unit of distance, where distance adds CLASS for the other card, OTHER_MODEL
  for another checkpoint (or speculative setup) and TP size, and log2 of how far the command's prefill chunk,
  request cap and CUDA-graph batch size exceed the launch's (smaller is inside the evidence; an unrecorded chunk or
  cap counts 1); beyond MAX_DISTANCE a launch is not evidence;
- a launch that ran out of memory at capture or on the first request caps the same card and model, at a command at
  least as demanding, FAIL_STEP below its fraction (one step for the unknown shortfall, one for the margin).

Confidence: "measured" when a point is this command on this card under this release or build (the sizing arguments
and the fraction equal),
"calibrated" when the fraction sits inside a comparable point's support (the margin below it shown), else
"extrapolated" with the distance to the nearest point and what no point covers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Literal, Protocol

from hybridplan.hardware.catalog import GPU, catalog
from hybridplan.weights.quant import METHOD_DEFAULTS


class ResolvedArgs(Protocol):
    """A launch as its engine resolved it, read by the engine's field names (sglang's EngineArgs is one)."""

    @property
    def version(self) -> str: ...

    def get(self, name: str, default: Any = None) -> Any: ...

    def __getitem__(self, name: str) -> Any: ...

STEP = 0.01  # fraction kept below a supporting launch per unit of distance
CLASS = 1.0  # another card of the same architecture (no more memory than this one)
OTHER_MODEL = 1.0  # another checkpoint or speculative setup: its activation widths are not the ones measured
OTHER_TP = 1.0  # another tensor-parallel size: NCCL buffers and per-rank shares differ
FAIL_STEP = 2 * STEP  # kept below a launch that ran out of memory at runtime
MAX_DISTANCE = 3.0  # beyond this a launch says nothing about the command
NO_EVIDENCE_STEP = 0.05  # without evidence: at most this far above the engine's default ...
NO_EVIDENCE_FLOOR = 0.90  # ... or up to this fraction, whichever is higher
RUNTIME_PHASES = ("cuda_graph", "first_request")
# resolved arguments that must be equal for a launch to be "this command" (measured), besides card and fraction
MATCH_KEYS = ("model_path", "speculative_algorithm", "speculative_draft_model_path", "speculative_num_draft_tokens",
              "speculative_num_steps", "speculative_eagle_topk", "mamba_radix_cache_strategy", "mamba_ssm_dtype",
              "kv_cache_dtype", "max_running_requests", "cuda_graph_decode_max_bs", "tp_size", "pp_size",
              "page_size", "attention_backend", "context_length", "chunked_prefill_size", "mamba_full_memory_ratio",
              "max_mamba_cache_size", "disable_radix_cache", "enable_linear_replayssm_spec")
Level = Literal["measured", "calibrated", "extrapolated"]


@dataclass(frozen=True, kw_only=True)
class EvidencePoint:
    """One measured launch as evidence: where it ran, with what, and whether it served."""

    engine: str  # the engine that ran it (its name in engine.api.engines()): evidence speaks for that engine only
    kind: str  # "page record" | "boot log" | "launch report"
    label: str
    source: str  # the link or citation
    gpu: str  # a catalog id
    model: str | None  # checkpoint id (with spec setup folded in where known), None when not recorded
    outcome: Literal["served", "failed"]
    phase: str | None  # the failing phase, when recorded
    mem_fraction_static: float  # the engine's memory fraction (--mem-fraction-static, --gpu-memory-utilization)
    chunked_prefill_size: int | None = None  # the prefill chunk (tokens batched per step)
    max_running_requests: int | None = None
    cuda_graph_max_bs: int | None = None
    tp: int | None = None
    build: str | None = None
    version: str | None = None  # the release (or build profile) `args` were resolved under
    args: Mapping[str, Any] | None = None  # resolved MATCH_KEYS when the command is known (for "measured")

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "args"}
        return out


# (engine, card, engine version) -> the engine's launches measured on that card or on cards of its architecture
EvidenceSource = Callable[[str, GPU, str], Sequence[EvidencePoint]]


def model_key(args: ResolvedArgs | Mapping[str, Any]) -> str:
    """The checkpoint and speculative setup a launch's activation memory follows (what OTHER_MODEL compares)."""
    parts = [str(args.get("model_path"))]
    if args.get("quantization") in METHOD_DEFAULTS:  # an INT4 method on a bf16 id names a community export's bytes
        parts.append(f"--quantization {args.get('quantization')}")
    if args.get("speculative_algorithm"):
        parts += [str(args.get("speculative_algorithm")), str(args.get("speculative_draft_model_path") or "")]
    return " + ".join(p for p in parts if p)


def match_args(args: ResolvedArgs | Mapping[str, Any]) -> dict[str, Any]:
    """The resolved arguments a measured launch must share with a command to be that command."""
    return {k: args.get(k) for k in MATCH_KEYS}


@dataclass(frozen=True, kw_only=True)
class Probe:
    """The facts of one command on one card that evidence is compared on (launches of its engine: EvidenceSource)."""

    gpu: GPU
    model: str
    mem_fraction_static: float  # the engine's memory fraction ...
    fraction_flag: str  # ... and the flag that sets it, as the notes name it
    chunked_prefill_size: int | None
    concurrency: int  # requests the command admits (its request cap as sized)
    cuda_graph_max_bs: int | None
    tp: int
    version: str
    args: Mapping[str, Any]

    @classmethod
    def of(cls, args: ResolvedArgs, gpu: GPU, concurrency: int) -> Probe:
        """A launch resolved by sglang, read by its argument names (ResolvedArgs)."""
        return cls(gpu=gpu, version=args.version, model=model_key(args),
                   mem_fraction_static=float(args["mem_fraction_static"]), fraction_flag="--mem-fraction-static",
                   chunked_prefill_size=args.get("chunked_prefill_size"), concurrency=concurrency,
                   cuda_graph_max_bs=args.get("cuda_graph_decode_max_bs"), tp=int(args.get("tp_size") or 1),
                   args=match_args(args))


@dataclass(frozen=True)
class Distance:
    """How far a command sits from a launch: the sum, and each non-zero term in words."""

    value: float
    terms: tuple[str, ...]


def _beyond(mine: int | None, theirs: int | None, what: str) -> tuple[float, str | None]:
    """log2 of how far the command's value exceeds the launch's (0 inside it); unknown on either side counts 1."""
    if mine is None or theirs is None or mine <= 0 or theirs <= 0:
        return (1.0, f"{what} not recorded") if mine != theirs else (0.0, None)
    if mine <= theirs:
        return 0.0, None
    d = math.log2(mine / theirs)
    return d, f"{what} {mine:,} is {mine / theirs:.3g}x the measured {theirs:,}"


@lru_cache(maxsize=1)
def _cards() -> dict[str, GPU]:
    return {g.id: g for g in catalog()}


def same_class(probe_gpu: GPU, gpu_id: str) -> bool:
    """A card whose fraction evidence transfers: same vendor and architecture, no more memory (less slack)."""
    other = _cards().get(gpu_id)
    return (other is not None and other.vendor == probe_gpu.vendor and other.arch == probe_gpu.arch
            and other.memory_mib <= probe_gpu.memory_mib)


def distance(p: EvidencePoint, probe: Probe) -> Distance | None:
    """The distance from a launch to the command; None when the launch is on a card whose evidence does not transfer."""
    terms: list[tuple[float, str | None]] = []
    if p.gpu != probe.gpu.id:
        if not same_class(probe.gpu, p.gpu):
            return None
        terms.append((CLASS, f"measured on {p.gpu}, not {probe.gpu.id}"))
    if p.model != probe.model:
        terms.append((OTHER_MODEL, f"another model ({p.model or 'not recorded'})"))
    if p.tp is not None and p.tp != probe.tp:
        terms.append((OTHER_TP, f"TP {p.tp}, not {probe.tp}"))
    terms.append(_beyond(probe.chunked_prefill_size, p.chunked_prefill_size, "prefill chunk"))
    terms.append(_beyond(probe.concurrency, p.max_running_requests, "request cap"))
    if probe.cuda_graph_max_bs is not None and p.cuda_graph_max_bs is not None:
        terms.append(_beyond(probe.cuda_graph_max_bs, p.cuda_graph_max_bs, "CUDA-graph batch size"))
    return Distance(value=round(sum(v for v, _ in terms), 3), terms=tuple(t for v, t in terms if t and v > 0))


@dataclass(frozen=True, kw_only=True)
class Support:
    """One point's say on the command: its distance and the fraction it supports (served) or caps (failed)."""

    point: EvidencePoint
    distance: Distance
    fraction: float

    def as_dict(self) -> dict[str, Any]:
        return {"point": self.point.as_dict(), "distance": self.distance.value, "terms": list(self.distance.terms),
                "fraction": self.fraction}


def _at_least_as_demanding(p: EvidencePoint, probe: Probe) -> bool:
    """The command needs at least the slack the failed launch needed (same card and model, nothing smaller)."""
    def ge(mine: int | None, theirs: int | None) -> bool:
        return theirs is None or (mine is not None and mine >= theirs)
    return (p.gpu == probe.gpu.id and p.model == probe.model and (p.tp is None or p.tp == probe.tp)
            and ge(probe.chunked_prefill_size, p.chunked_prefill_size) and ge(probe.concurrency, p.max_running_requests)
            and ge(probe.cuda_graph_max_bs, p.cuda_graph_max_bs))


def supports(points: Sequence[EvidencePoint], probe: Probe) -> list[Support]:
    """Every point that speaks for the command: served launches within MAX_DISTANCE (the fraction they support) and
    runtime out-of-memory failures at a command at least as demanding (the fraction they cap), nearest first."""
    out = []
    for p in points:
        if p.outcome == "failed":
            if p.phase in RUNTIME_PHASES and _at_least_as_demanding(p, probe):
                out.append(Support(point=p, distance=Distance(value=0.0, terms=()),
                                   fraction=round(p.mem_fraction_static - FAIL_STEP, 3)))
            continue
        d = distance(p, probe)
        if d is not None and d.value <= MAX_DISTANCE:
            out.append(Support(point=p, distance=d, fraction=round(p.mem_fraction_static - STEP * d.value, 3)))
    return sorted(out, key=lambda s: (s.distance.value, -s.fraction))


@dataclass(frozen=True, kw_only=True)
class FractionBound:
    """How high --mem-fraction-static may go for a command: the engine's default, the ceiling and why."""

    engine_default: float
    no_evidence_ceiling: float  # max(engine default + NO_EVIDENCE_STEP, NO_EVIDENCE_FLOOR)
    ceiling: float
    rule: str
    support: Support | None  # the served launch the ceiling rests on (None: the no-evidence rule)
    cap: Support | None  # the failed launch that caps it, if any
    evidence: tuple[Support, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"engine_default": self.engine_default, "no_evidence_ceiling": self.no_evidence_ceiling,
                "ceiling": self.ceiling, "rule": self.rule,
                "support": self.support.as_dict() if self.support else None,
                "cap": self.cap.as_dict() if self.cap else None, "evidence": [s.as_dict() for s in self.evidence]}


def fraction_bound(probe: Probe, engine_default: float, points: Sequence[EvidencePoint]) -> FractionBound:
    """The highest fraction the evidence lets a plan recommend for the command (docs/calibration.md, Margin rule)."""
    free = round(max(engine_default + NO_EVIDENCE_STEP, NO_EVIDENCE_FLOOR), 3)
    ev = supports(points, probe)
    served = [s for s in ev if s.point.outcome == "served"]
    failed = [s for s in ev if s.point.outcome == "failed"]
    best = max(served, key=lambda s: s.fraction, default=None)
    cap = min(failed, key=lambda s: s.fraction, default=None)
    ceiling, rule = free, (f"no comparable launch beyond it: max(engine default {engine_default} + {NO_EVIDENCE_STEP}, "
                           f"{NO_EVIDENCE_FLOOR}) = {free}")
    if best is not None and best.fraction > free:
        ceiling = best.fraction
        rule = (f"{best.point.kind} {best.point.label} served at {best.point.mem_fraction_static} "
                f"(distance {best.distance.value:g}: {STEP} x {best.distance.value:g} kept below it)")
    else:
        best = None
    if cap is not None and cap.fraction < ceiling:
        ceiling = cap.fraction
        rule += (f"; capped {FAIL_STEP} below {cap.point.kind} {cap.point.label}, out of memory "
                 f"({cap.point.phase}) at {cap.point.mem_fraction_static}")
    else:
        cap = None
    return FractionBound(engine_default=engine_default, no_evidence_ceiling=free, ceiling=ceiling, rule=rule,
                         support=best, cap=cap, evidence=tuple(ev))


@dataclass(frozen=True, kw_only=True)
class Confidence:
    """How much a verdict rests on: measured (this command on this card), calibrated (inside comparable evidence,
    `margin` below it) or extrapolated (`distance` from the nearest launch, what no launch covers)."""

    level: Level
    basis: tuple[str, ...]  # the launches it rests on: "kind label (source)"
    margin: float | None = None  # calibrated: fraction below the supporting launch
    distance: float | None = None  # extrapolated: to the nearest comparable launch (None: none on this card or class)
    unknowns: tuple[str, ...] = ()
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"level": self.level, "basis": list(self.basis), "margin": self.margin, "distance": self.distance,
                "unknowns": list(self.unknowns), "note": self.note}


def _cite(p: EvidencePoint) -> str:
    return f"{p.kind} {p.label} ({p.source})"


def confidence(probe: Probe, points: Sequence[EvidencePoint]) -> Confidence:
    """The confidence of a verdict on the command (the Probe), from the evidence on its card and class."""
    same = [p for p in points if p.gpu == probe.gpu.id and p.version == probe.version and p.args is not None
            and dict(p.args) == dict(probe.args) and abs(p.mem_fraction_static - probe.mem_fraction_static) < 5e-4]
    if same:
        return Confidence(level="measured", basis=tuple(_cite(p) for p in same), note=(
            f"{len(same)} measured launch(es) of this command on {probe.gpu.id}: "
            + ", ".join(f"{p.label} {p.outcome}" + (f" ({p.phase})" if p.phase else "") for p in same)))
    ev = supports(points, probe)
    f = probe.mem_fraction_static
    inside = [s for s in ev if (s.point.outcome == "served" and f <= s.fraction + 5e-4)
              or (s.point.outcome == "failed" and f >= s.point.mem_fraction_static - 5e-4)]
    if inside:
        s = inside[0]
        margin = round(abs(s.point.mem_fraction_static - f), 3)
        side = "below" if s.point.outcome == "served" else "at or above"
        return Confidence(level="calibrated", basis=tuple(_cite(x.point) for x in inside[:3]), margin=margin,
                          distance=s.distance.value, unknowns=s.distance.terms, note=(
                              f"{probe.fraction_flag} {f} is {margin} {side} {s.point.kind} {s.point.label} "
                              f"({s.point.outcome} at {s.point.mem_fraction_static}, distance {s.distance.value:g})"))
    near = [s for s in ev if s.point.outcome == "served"]
    comparable = [(d, p) for p in points if p.outcome == "served"
                  for d in [distance(p, probe)] if d is not None]
    if not comparable:
        failed = [p for p in points if p.outcome == "failed" and (p.gpu == probe.gpu.id or same_class(probe.gpu, p.gpu))]
        others = (f"; {len(failed)} measured there failed ({', '.join(p.label for p in failed[:3])}), none at this "
                  "command or one it is at least as demanding as") if failed else ""
        return Confidence(level="extrapolated", basis=tuple(_cite(p) for p in failed[:3]), unknowns=(
            f"no launch measured serving on {probe.gpu.id} or a smaller {probe.gpu.arch} card",
            "allocator fragmentation over long mixed traffic"), note=(
                f"no launch measured serving on {probe.gpu.id} or its class{others}: the fraction rests on the "
                "model's estimate alone"))
    d, p = min(comparable, key=lambda x: x[0].value)
    if near:
        s = near[0]
        return Confidence(level="extrapolated", basis=(_cite(s.point),), distance=s.distance.value,
                          unknowns=s.distance.terms + (f"{probe.fraction_flag} {f} above the {s.fraction} it supports",),
                          note=(f"{round(f - s.fraction, 3)} above what {s.point.kind} {s.point.label} supports "
                                f"(served at {s.point.mem_fraction_static}, distance {s.distance.value:g})"))
    return Confidence(level="extrapolated", basis=(_cite(p),), distance=d.value, unknowns=d.terms, note=(
        f"the nearest measured launch, {p.kind} {p.label} (served at {p.mem_fraction_static}), is {d.value:g} away "
        f"(beyond {MAX_DISTANCE:g}: not evidence)"))


def rule_text() -> list[str]:
    """The margin rule as docs/calibration.md prints it (benchmarks/calibration_table.py), from the constants above."""
    return [
        "## Margin rule (how far `plan` goes above the engine's default fraction)", "",
        "The baseline is the engine's own default `--mem-fraction-static` for the command (the release's rule). "
        "`plan` recommends the highest fraction the model says is safe, but never above the ceiling the evidence "
        "allows (`evidence.py`; evidence: the pages' records and measured cells, the public boot logs above, and any other "
        "source handed in):", "",
        f"- **No comparable launch**: at most max(engine default + {NO_EVIDENCE_STEP}, {NO_EVIDENCE_FLOOR}).",
        f"- **A launch that served** on the same card, or on a card of the same vendor and architecture with no more "
        f"memory (its fraction left less slack), supports its fraction less {STEP} per unit of *distance*. Distance "
        f"adds {CLASS:g} for the other card, {OTHER_MODEL:g} for another checkpoint or speculative setup, "
        f"{OTHER_TP:g} for another TP size, and log2 of how far the command's prefill chunk, request cap and "
        "CUDA-graph batch size exceed the launch's (a smaller value is inside the evidence; a prefill chunk or "
        "request cap the launch did not record counts 1, a graph batch size counts where both are known). Beyond a distance of {MAX_DISTANCE:g} a launch is not evidence. The ceiling is the "
        "highest fraction any launch supports, or the no-evidence ceiling when that is higher.",
        f"- **A launch that ran out of memory** at graph capture or on its first request caps the same card and "
        f"model, for a command at least as demanding (prefill chunk, request cap, graph batch size), {FAIL_STEP:g} "
        "below its fraction: one step for the unknown shortfall, one for the margin.",
        "- `--max-mem-fraction` replaces the ceiling for a user who wants more and knows why.", "",
        "Every verdict carries a confidence: **measured** (a launch of this command on this card, under the "
        "release or build profile modelled, fraction included), **calibrated** (the fraction sits inside a comparable launch's support; the margin below it "
        "is shown) or **extrapolated** (the distance to the nearest launch and what no launch covers).", ""]
