"""`hybridplan plan`: search launch settings for a target (GPU, checkpoint, spec, L, C) and pick the cheapest that fits.

The search varies the radix strategy, the SSM state dtype and (when asked) --max-running-requests and chunked
prefill; for each it takes the highest safe --mem-fraction-static on the card, then sizes the state pool with the
balanced ratio (or the pin when no ratio balances) and checks the engine's own sizing serves C requests of L tokens.
Candidates are ranked by how much they give up (radix caching, state precision, prefill chunk).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from hybridplan.engine.args import EngineArgs
from hybridplan.engine.command import LaunchCommand, parse_command
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.hardware.catalog import GPU, catalog, from_options
from hybridplan.planner import ratio as rt
from hybridplan.planner.checkpoints import checkpoint_for, spec_flags
from hybridplan.planner.overrides import with_args
from hybridplan.planner.timeline import MemoryTimeline, breakdown_of, build
from hybridplan.weights.report import WeightReport

if TYPE_CHECKING:
    from hybridplan.loading import Loaded

GIB = 1 << 30
MAX_FRACTION = 0.98
MIN_FRACTION = 0.05
MEASURED_STEP = 0.005  # how far below a recorded out-of-memory fraction the search steps
SAFE_ROUNDS = 4  # the slack need moves a little with the fraction (T, the request cap): settle it in a few rounds
CHUNKS = (8192, 4096, 2048, 1024, 512)
# what each change gives up, cheapest first (the order `plan` prefers and names changes in)
STRATEGIES = (  # (label, flags, cost)
    ("default", (), 0.0),
    ("extra_buffer_lazy", ("--mamba-radix-cache-strategy", "extra_buffer_lazy"), 1.0),
    ("no_buffer", ("--mamba-radix-cache-strategy", "no_buffer", "--disable-overlap-schedule"), 3.0),
    ("radix off", ("--disable-radix-cache",), 4.0),
)
DTYPES = (("config", (), 0.0), ("bfloat16", ("--mamba-ssm-dtype", "bfloat16"), 2.0))


@dataclass(frozen=True, kw_only=True)
class MeasuredFailure:
    """A measured launch that shows a setting failing on a card (a cookbook page's record, handed in by the caller)."""

    label: str
    phase: str | None  # weights | state_pool | kv_pool | cuda_graph | first_request, None when not recorded
    build: str
    source: str


# (resolved args, GPU id, engine version) -> the measured failure those settings fall under, or None
FailureLookup = Callable[[EngineArgs, str, str], "MeasuredFailure | None"]


@dataclass(frozen=True, kw_only=True)
class Target:
    """What the user wants served (and, from the caller, the measured failures a recommendation must stay clear of)."""

    model: str
    gpu: GPU
    request_length: int
    concurrency: int
    quant: str | None = None
    spec: str | None = None
    draft: str | None = None
    tp: int = 1
    extra_flags: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    tune_mrr: bool = False
    tune_chunked_prefill: bool = False
    max_mem_fraction: float | None = None
    use_pin: bool = False
    weights_gib: float | None = None
    hub: bool = False
    version: str | None = None
    measured: FailureLookup | None = None


def target_from_options(*, model: str, gpu: str | None, gpu_memory_gib: float | None, request_length: int,
                        concurrency: int, quant: str | None, spec: str | None, draft: str | None, tp: int,
                        extra: str | Sequence[str] | None, tune_mrr: bool, tune_chunked_prefill: bool,
                        max_mem_fraction: float | None, pin: bool, weights_gib: float | None, hub: bool,
                        version: str | None, measured: FailureLookup | None = None) -> Target:
    """The Target `plan` options name (the CLI's and the web's): the card from --gpu / --gpu-memory-gib, and the
    extra env and flags (tokens after `--`, or the pasted text) parsed once."""
    card = from_options(gpu, gpu_memory_gib)
    if card is None:
        raise BadInput("plan needs a GPU: --gpu (see the catalog ids) or --gpu-memory-gib")
    given = extra.strip() if isinstance(extra, str) else extra
    parsed = parse_command(extra if isinstance(extra, str) else list(extra)) if extra is not None and given else None
    return Target(model=model, gpu=card, request_length=request_length, concurrency=concurrency, quant=quant,
                  spec=spec, draft=draft, tp=tp, extra_flags=parsed.argv if parsed else (),
                  env=parsed.env if parsed else (), tune_mrr=tune_mrr, tune_chunked_prefill=tune_chunked_prefill,
                  max_mem_fraction=max_mem_fraction, use_pin=pin, weights_gib=weights_gib, hub=hub, version=version,
                  measured=measured)


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One point of the search: the changes it makes and what they cost."""

    strategy: str
    dtype: str
    mrr: int | None
    chunk: int | None
    flags: tuple[str, ...]
    cost: float

    @property
    def changes(self) -> list[str]:
        out = []
        if self.strategy != "default":
            out.append(f"radix strategy {self.strategy}" if self.strategy != "radix off" else "radix cache off")
        if self.dtype != "config":
            out.append(f"{self.dtype} SSM state")
        if self.mrr is not None:
            out.append(f"--max-running-requests {self.mrr}")
        if self.chunk is not None:
            out.append(f"--chunked-prefill-size {self.chunk}")
        return out


@dataclass(frozen=True, kw_only=True)
class Split:
    """How a fitting candidate sizes the state pool: the balanced ratio, else the pin, and the engine's sizing at it."""

    kind: str  # "ratio" | "pin"
    flags: tuple[str, ...]
    ratio: float | None
    pin: int
    served: int
    binding_pool: str | None
    args: EngineArgs
    sizing: dict[str, Any]  # loading.sizing_payload at the split


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """A candidate evaluated: fits or not, the split it uses, the command, and the numbers behind it."""

    candidate: Candidate
    fits: bool
    reason: str | None
    argv: tuple[str, ...] = ()
    mem_fraction: float | None = None
    split: Split | None = None
    timeline: MemoryTimeline | None = None
    needs: dict[str, int] | None = None
    served: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)
    measured_failure: MeasuredFailure | None = None  # the measured launch that shows these settings failing


def candidates(t: Target, concurrency: int) -> list[Candidate]:
    mrrs = (None, concurrency) if t.tune_mrr else (None,)
    chunks = (None,) + CHUNKS if t.tune_chunked_prefill else (None,)
    out = []
    for (sl, sf, sc), (dl, df, dc), mrr, chunk in itertools.product(STRATEGIES, DTYPES, mrrs, chunks):
        flags = sf + df + (("--max-running-requests", str(mrr)) if mrr else ()) + \
            (("--chunked-prefill-size", str(chunk)) if chunk else ())
        cost = sc + dc + (0.5 if mrr else 0.0) + (0.0 if chunk is None else 1.0 + CHUNKS.index(chunk) * 0.1)
        out.append(Candidate(strategy=sl, dtype=dl, mrr=mrr, chunk=chunk, flags=flags, cost=cost))
    return sorted(out, key=lambda c: c.cost)


class Planner:
    """Evaluates candidates for one target; weights are computed once per resolved checkpoint layout."""

    def __init__(self, t: Target) -> None:
        if t.request_length <= 0 or t.concurrency <= 0:
            raise BadInput("--request-length and --concurrency must be positive integers")
        self.t = t
        self.ckpt = checkpoint_for(t.model, t.quant)
        self.spec = spec_flags(t.spec, self.ckpt.ref, t.draft)
        self.base = ("--model-path", self.ckpt.ref) + (("--tp-size", str(t.tp)) if t.tp > 1 else ()) + self.spec \
            + t.extra_flags
        self._weights: dict[tuple[object, ...], WeightReport] = {}

    def command(self, argv: tuple[str, ...]) -> LaunchCommand:
        return LaunchCommand(env=self.t.env, argv=argv)

    def weights(self, loaded: Loaded) -> WeightReport:
        from hybridplan.weights.quant import NAMED
        from hybridplan.weights.report import model_weights

        a = loaded.args
        key = (a["model_path"], a["speculative_draft_model_path"], a["tp_size"], a["pp_size"], a["attn_dp_size"],
               a["is_multimodal"], a["speculative_algorithm"])
        if key not in self._weights:
            policy = NAMED[self.ckpt.estimated_quant] if self.ckpt.estimated_quant else None
            self._weights[key] = model_weights(a, loaded.geometry, hub=self.t.hub, target_gib=self.t.weights_gib,
                                               policy=policy)
        return self._weights[key]

    def evaluate(self, c: Candidate, gpu: GPU | None = None, L: int | None = None, C: int | None = None) -> Outcome:
        """Resolve the candidate on the card, fix the mem fraction, size the pools and check the target."""
        from hybridplan.loading import load

        gpu, L, C = gpu or self.t.gpu, L or self.t.request_length, C or self.t.concurrency
        argv = self.base + c.flags
        try:
            loaded = load(self.command(argv), platform=gpu.platform(), version=self.t.version)
        except EngineRefusal as exc:
            return Outcome(candidate=c, fits=False, reason=f"the engine rejects it: {exc.message}")
        ok, why = gpu.supports_quant(self.ckpt.quant or loaded.geometry.quant_method)
        if not ok:
            return Outcome(candidate=c, fits=False, reason=why)
        weights = self.weights(loaded)
        if self.t.max_mem_fraction is not None:
            return self._sized(c, *self._at(loaded, gpu, weights, min(self.t.max_mem_fraction, MAX_FRACTION)),
                               gpu, weights, argv, L, C)
        # The slack need depends on the final command (its request cap sizes graphs and tables): settle the fraction
        # on the sized command in a few rounds, keeping the highest one whose slack holds it.
        moved, tl = self._at_safe_fraction(loaded, gpu, weights)
        best = o = self._sized(c, moved, tl, gpu, weights, argv, L, C)
        for _ in range(SAFE_ROUNDS):
            if not o.fits:
                break
            if o.timeline is None or o.mem_fraction is None:
                break
            want = max(MIN_FRACTION, min(o.timeline.max_safe_mem_fraction.value, MAX_FRACTION))
            if abs(want - o.mem_fraction) < 0.001:
                break
            o = self._sized(c, *self._at(loaded, gpu, weights, want), gpu, weights, argv, L, C)
            if _fits_safely(o) and (not _fits_safely(best) or _fraction(o) > _fraction(best)):
                best = o
        return self._below_measured_failure(best, c, loaded, gpu, weights, argv, L, C)

    def _below_measured_failure(self, o: Outcome, c: Candidate, loaded: Loaded, gpu: GPU, weights: WeightReport,
                                argv: tuple[str, ...], L: int, C: int) -> Outcome:
        """A fraction a record shows running out of memory (capture or first request) is left for the step below it,
        when the model says that one still serves."""
        r = o.measured_failure
        if r is None or r.phase not in ("cuda_graph", "first_request"):
            return o
        lower = round(_fraction(o) - MEASURED_STEP, 3)
        while lower >= MIN_FRACTION:
            again = self._sized(c, *self._at(loaded, gpu, weights, lower), gpu, weights, argv, L, C)
            if again.measured_failure is None:
                return again if _fits_safely(again) else o
            lower = round(lower - MEASURED_STEP, 3)
        return o

    def _sized(self, c: Candidate, loaded: Loaded, tl: MemoryTimeline, gpu: GPU, weights: WeightReport,
               argv: tuple[str, ...], L: int, C: int) -> Outcome:
        """The candidate at the fraction `loaded` carries: pools, the target check, the split and its timeline."""
        mfs = loaded.args["mem_fraction_static"]
        g = rt.sizes_of(loaded)
        pin = rt.pin_for(C, g)
        if tl.available_gib.value <= 0:
            return Outcome(candidate=c, fits=False, timeline=tl, mem_fraction=mfs, reason=(
                f"the weights ({weights.per_rank_bytes / GIB:.2f} GiB per rank) exceed the "
                f"{tl.pre_load_gib.value:.2f} GiB free before loading on {gpu.name}"))
        check = rt.pin_check(loaded, tl.budget, pin, C, L, g)
        if not check["fits"]:
            return Outcome(candidate=c, fits=False, reason=check["reason"], timeline=tl, mem_fraction=mfs,
                           needs=check["needs"], argv=argv)
        split = self._split(loaded, tl, g, pin, L, C, check)
        flags = ("--mem-fraction-static", repr(mfs)) + split.flags
        final = self.timeline(replace(loaded, args=split.args), gpu, weights)  # the pools as the split sizes them
        # a generic card (--gpu-memory-gib alone) is in no page, so no record can show it failing
        r = self.t.measured(split.args, gpu.id, loaded.version) if self.t.measured and not gpu.generic else None
        if r is not None:
            return Outcome(candidate=c, fits=False, timeline=final, mem_fraction=mfs, argv=argv + flags, split=split,
                           needs=check["needs"], measured_failure=r, reason=(
                               f"measured failing: record {r.label} ({r.phase or 'failed'} on build {r.build[:9]}, "
                               f"{r.source}) shows these settings failing on {gpu.name}"))
        return Outcome(candidate=c, fits=True, reason=None, argv=argv + flags, mem_fraction=mfs, split=split,
                       timeline=final, needs=check["needs"], served=split.served,
                       notes=tuple(loaded.args.notes) + tuple(weights.notes))

    def timeline(self, loaded: Loaded, gpu: GPU, weights: WeightReport) -> MemoryTimeline:
        return build(loaded.args, loaded.geometry, gpu=gpu, weights=weights, version=self.t.version, draft=loaded.draft)

    def _at(self, loaded: Loaded, gpu: GPU, weights: WeightReport, mfs: float) -> tuple[Loaded, MemoryTimeline]:
        moved = replace(loaded, args=with_args(loaded.args, mem_fraction_static=mfs))
        return moved, self.timeline(moved, gpu, weights)

    def _at_safe_fraction(self, loaded: Loaded, gpu: GPU, weights: WeightReport) -> tuple[Loaded, MemoryTimeline]:
        """The command at the highest --mem-fraction-static whose slack holds the headroom (a few rounds: the slack
        need moves a little with the fraction through T and the request cap)."""
        mfs, tl = 1.0, self.timeline(loaded, gpu, weights)
        moved = loaded
        for _ in range(SAFE_ROUNDS):
            want = max(MIN_FRACTION, min(tl.max_safe_mem_fraction.value, MAX_FRACTION, mfs))
            if want == mfs:
                break
            mfs = want
            moved, tl = self._at(loaded, gpu, weights, mfs)
            if tl.slack_fits_headroom:
                break
        return moved, tl

    def _split(self, loaded: Loaded, tl: MemoryTimeline, g: rt.Sizes, pin: int, L: int, C: int,
               check: dict[str, Any]) -> Split:
        """The balanced ratio when one balances and serves C (the engine then splits any surplus evenly), else the pin."""
        per_rank = math.ceil(C / g.dp)
        if not self.t.use_pin and g.branch == "ratio" and g.cell > 0:
            bal = rt.exact_balance(rt.Search(loaded, tl.budget, g, L), rt.continuous_ratio(g, L))
            p = bal.point
            if (bal.ratio is not None and p is not None and p.sizing is not None and p.served >= per_rank
                    and p.sizing.max_running_requests >= per_rank):
                args = with_args(loaded.args, mamba_full_memory_ratio=bal.ratio)
                return Split(kind="ratio", flags=("--mamba-full-memory-ratio", repr(bal.ratio)), ratio=bal.ratio,
                             pin=pin, served=p.served, binding_pool=bal.binding, args=args,
                             sizing=rt.pool_split(loaded, tl.budget, args))
        args = with_args(loaded.args, max_mamba_cache_size=pin)
        return Split(kind="pin", flags=("--max-mamba-cache-size", str(pin)), ratio=None, pin=pin,
                     served=min(check["max_mamba_cache_size"] // g.S, check["kv_concurrency"]), args=args,
                     binding_pool="state_pool", sizing=rt.pool_split(loaded, tl.budget, args))

    def min_mem_fraction(self, best: Outcome) -> float | None:
        """The lowest --mem-fraction-static at which the chosen settings still serve the target (bisection)."""
        from hybridplan.loading import load

        lo, hi = 0.05, _fraction(best)
        argv = best.argv
        try:
            loaded = load(self.command(argv), platform=self.t.gpu.platform(), version=self.t.version)
        except EngineRefusal:
            return None
        weights = self.weights(loaded)
        g = rt.sizes_of(loaded)

        def fits(m: float) -> bool:
            args = with_args(loaded.args, mem_fraction_static=m)
            tl = self.timeline(replace(loaded, args=args), self.t.gpu, weights)
            return bool(rt.pin_check(replace(loaded, args=args), tl.budget, rt.pin_for(self.t.concurrency, g),
                                     self.t.concurrency, self.t.request_length, g)["fits"])

        if not fits(hi):
            return None
        while hi - lo > 0.0005:
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if fits(mid) else (mid, hi)
        return math.ceil(hi * 1000) / 1000


def _fraction(o: Outcome) -> float:
    """The mem fraction an evaluated candidate was sized at (every outcome past loading has one)."""
    assert o.mem_fraction is not None
    return o.mem_fraction


def _fits_safely(o: Outcome) -> bool:
    """It fits, and its slack holds the estimated headroom and the margin."""
    return o.fits and o.timeline is not None and o.timeline.slack_fits_headroom


def _largest_fit(lo: int, hi: int, fits: Callable[[int], bool]) -> int:
    """Largest n in [lo, hi] with fits(n) (monotone true -> false); lo - 1 when none."""
    best = lo - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(mid):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


def _cheapest_changes(pl: Planner, base: Outcome) -> list[dict[str, Any]]:
    """Changes that would make the target fit, cheapest first: each search dimension, smaller L or C, a larger card."""
    t = pl.t
    out: list[dict[str, Any]] = []
    wider = replace(t, tune_mrr=True, tune_chunked_prefill=True)
    for c in candidates(wider, t.concurrency)[1:]:
        o = pl.evaluate(c)
        if o.fits:
            out.append({"change": ", ".join(c.changes), "cost": c.cost, "command_flags": list(c.flags)})
            break
    plain = candidates(t, t.concurrency)[0]
    if base.needs is not None and base.reason and "KV pool" in base.reason:
        L = _largest_fit(1, t.request_length - 1, lambda n: pl.evaluate(plain, L=n).fits)
        if L >= 1:
            out.append({"change": f"request length {L:,} tokens (from {t.request_length:,})", "cost": 5.0})
    C = _largest_fit(1, t.concurrency - 1, lambda n: pl.evaluate(plain, C=n).fits)
    if C >= 1:
        out.append({"change": f"concurrency {C} (from {t.concurrency})", "cost": 5.5})
    for quant in ("fp8", "nvfp4-bf16-head", "nvfp4"):
        ck = checkpoint_for(t.model, quant)
        if quant != t.quant and not ck.estimated_quant and pl.ckpt.ref != ck.ref:
            if Planner(replace(t, quant=quant)).evaluate(plain).fits:
                out.append({"change": f"the {quant} checkpoint {ck.ref}", "cost": 5.8})
                break
    for gpu in sorted(catalog(), key=lambda g: g.memory_mib):
        if gpu.memory_mib > t.gpu.memory_mib and gpu.vendor == t.gpu.vendor and pl.evaluate(plain, gpu=gpu).fits:
            out.append({"change": f"a larger card: {gpu.id} ({gpu.memory_gib:.1f} GiB)", "cost": 6.0})
            break
    return sorted(out, key=lambda d: d["cost"])


def _why(base: Outcome, t: Target) -> str:
    """The failure of the unchanged settings, in numbers."""
    if base.needs is None or base.timeline is None:
        return base.reason or "it does not fit"
    n, tl = base.needs, base.timeline
    requests = f"{t.concurrency} request{'s' if t.concurrency != 1 else ''}"
    return (f"{base.reason}. {requests} of {t.request_length:,} tokens need{'s' if t.concurrency == 1 else ''} "
            f"{n['state_pool_bytes'] / GIB:.2f} GiB of state + {n['spec_scratch_bytes'] / GIB:.2f} GiB of verify scratch "
            f"+ {n['kv_bytes'] / GIB:.2f} GiB of KV = {n['total_bytes'] / GIB:.2f} GiB; {t.gpu.name} leaves "
            f"{tl.rest_gib.value:.2f} GiB for the pools at mem fraction {base.mem_fraction} ("
            + ("your --max-mem-fraction" if t.max_mem_fraction is not None else
               f"the highest safe value: its {tl.slack_gib.value:.2f} GiB slack holds an estimated "
               f"{tl.headroom_gib.value:.2f} GiB of CUDA graphs, activations and workspaces") + ")")


def breakdown(tl: MemoryTimeline, split: Split) -> dict[str, Any]:
    """Where the card's memory goes for the chosen command (GiB); the parts sum to the capacity (memory.total)."""
    return breakdown_of(tl.as_dict(), split.sizing["allocated"])


def plan(t: Target) -> dict[str, Any]:
    """The `plan --json` payload: the best command, its memory breakdown and binding limit, or why nothing fits."""
    pl = Planner(t)
    tried: list[dict[str, Any]] = []
    best: Outcome | None = None
    for c in candidates(t, t.concurrency):
        o = pl.evaluate(c)
        tried.append({"changes": c.changes, "cost": c.cost, "fits": o.fits, "reason": o.reason,
                      "mem_fraction_static": o.mem_fraction})
        if o.fits and (best is None or (c.cost, -o.served) < (best.candidate.cost, -best.served)):
            best = o
        if best is not None and c.cost > best.candidate.cost:
            break
    out: dict[str, Any] = {"target": {"model": t.model, "quant": t.quant, "gpu": t.gpu.as_dict(), "spec": t.spec,
                            "tp": t.tp, "request_length": t.request_length, "concurrency": t.concurrency},
                 "checkpoint": {"model_path": pl.ckpt.ref, "note": pl.ckpt.note,
                                "alternatives": list(pl.ckpt.alternatives)},
                 "tried": tried}
    if best is None:
        base = pl.evaluate(candidates(t, t.concurrency)[0])
        changes = _cheapest_changes(pl, base)
        out.update({"fits": False, "why": _why(base, t), "cheapest_change": changes[0]["change"] if changes else None,
                    "changes_that_fit": changes, "command": None})
        return out
    s, tl = best.split, best.timeline
    assert s is not None and tl is not None  # a fitting outcome carries its split and timeline
    sizing = s.sizing
    out.update({
        "fits": True, "command": pl.command(best.argv).text(), "argv": list(best.argv), "changes": best.candidate.changes,
        "mem_fraction_static": best.mem_fraction, "min_mem_fraction_static": pl.min_mem_fraction(best),
        "split": {"kind": s.kind, "mamba_full_memory_ratio": s.ratio,
                  "mamba_full_memory_ratio_text": rt.ratio_text(s.ratio) if s.ratio is not None else None,
                  "max_mamba_cache_size_pin": s.pin, "binding_pool": s.binding_pool},
        # what runs at once is capped by the command's request cap; the pools alone would hold `pool_capacity`
        "served_concurrency": min(best.served, sizing["max_running_requests"]), "pool_capacity": best.served,
        "binding_limit": sizing["binding_limit"],
        "max_mamba_cache_size": sizing["max_mamba_cache_size"], "max_total_num_tokens": sizing["max_total_num_tokens"],
        "max_running_requests": sizing["max_running_requests"], "pool_budget_gib": sizing["pool_budget_gib"],
        "breakdown": breakdown(tl, s), "timeline": tl.as_dict(), "log_lines": sizing["log_lines"],
        "warnings": list(dict.fromkeys(best.notes + ((pl.ckpt.note,) if pl.ckpt.estimated_quant else ()))),
    })
    if not tl.slack_fits_headroom:
        out["warnings"].append(f"the slack ({tl.slack_gib.value:.2f} GiB) is below what it must hold "
                               f"({tl.slack_need_gib.value:.2f} GiB: {tl.slack_need_gib.note}); estimated CUDA graphs, "
                               f"activations and workspaces: {tl.headroom_gib.note}")
    return out
