"""`hybridplan plan`: answer a target (GPU, L, C) for a launch command with the fewest changes that serve it.

The command is the user's (`plan ... -- <launch command>`: every flag and env assignment kept unless it must change)
or one built from the catalog (`--model`, `--quant`, `--spec`). The search tries every cheap knob, cheapest first:
the request cap at C, CUDA-graph batch sizes, smaller prefill chunks, a bf16 SSM state and the radix strategy. For
each it takes the highest --mem-fraction-static the model says is safe, but never above what the evidence supports
(planner.evidence: the engine's default is the baseline), then keeps the user's ratio or pin when it serves C
requests of L tokens, else sizes the state pool with the balanced ratio (or the pin when no ratio balances).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from hybridplan.engine.sglang.releases import NAME, for_version
from hybridplan.engine.sglang.args import EngineArgs
from hybridplan.engine.sglang.command import LaunchCommand, parse_command
from hybridplan.engine.registry import FlagRegistry
from hybridplan.engine.search import Candidate, Knob, candidates
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.hardware.catalog import GPU, catalog, from_options
from hybridplan.monotone import largest_true
from hybridplan import evidence as ev
from hybridplan.engine.sglang.serving import ratio as rt
from hybridplan.engine.argv import value_of, with_flag, without
from hybridplan.engine.sglang.serving.checkpoints import Checkpoint, checkpoint_for, spec_flags
from hybridplan.engine.sglang.serving.overrides import with_args
from hybridplan.engine.sglang.serving.timeline import MemoryTimeline, breakdown_of, build
from hybridplan.engine.sglang.serving.verdict import predict
from hybridplan.weights.report import WeightReport

if TYPE_CHECKING:
    from hybridplan.engine.sglang.serving.loading import Loaded

GIB = 1 << 30
MAX_FRACTION = 0.98
MIN_FRACTION = 0.05
MEASURED_STEP = 0.005  # how far below a recorded out-of-memory fraction the search steps
SAFE_ROUNDS = 4  # the slack need moves a little with the fraction (T, the request cap): settle it in a few rounds
CHUNKS = (16384, 8192, 4096, 2048, 1024, 512)
CHUNK_HALVING_COST = 0.75  # each halving of the prefill chunk: long prompts take twice the prefill steps


@dataclass(frozen=True, kw_only=True)
class MeasuredFailure:
    """A measured launch that shows a setting failing on a card (a cookbook page's record, handed in by the caller)."""

    label: str
    phase: str | None  # weights | state_pool | kv_pool | cuda_graph | first_request, None when not recorded
    build: str
    source: str


# (resolved args, GPU id) -> the measured failure those settings fall under, or None
FailureLookup = Callable[[EngineArgs, str], "MeasuredFailure | None"]


@dataclass(frozen=True, kw_only=True)
class Target:
    """What the user wants served, from which command (theirs, or the catalog's for `model`), and, from the caller,
    the measured failures a recommendation must stay clear of and the evidence its fraction rests on."""

    model: str
    gpu: GPU
    request_length: int
    concurrency: int
    command: LaunchCommand | None = None  # the user's launch command: answered with the fewest changes
    quant: str | None = None
    spec: str | None = None
    draft: str | None = None
    tp: int = 1
    extra_flags: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    max_mem_fraction: float | None = None
    use_pin: bool = False
    weights_gib: float | None = None
    hub: bool = False
    version: str | None = None
    measured: FailureLookup | None = None
    evidence: ev.EvidenceSource | None = None


def _model_of(command: LaunchCommand, version: str | None) -> str | None:
    """The command's --model-path (None when it names none); a command that names one is parsed as the engine parses
    it, so a bad flag in it is the engine's own one-line error."""
    from hybridplan.engine.sglang.serving.loading import model_refs

    reg = for_version(version).registry()
    options = (tok.partition("=")[0] for tok in command.argv if tok.startswith("--"))
    if not any(reg.knows(o) and reg.by_option[o].dest == "model_path" for o in options):
        return None
    return model_refs(command, version)[0] or None


def target_from_options(*, model: str | None, gpu: str | None, gpu_memory_gib: float | None, request_length: int,
                        concurrency: int, quant: str | None, spec: str | None, draft: str | None, tp: int,
                        extra: str | Sequence[str] | None, max_mem_fraction: float | None, pin: bool,
                        weights_gib: float | None, hub: bool, version: str | None,
                        measured: FailureLookup | None = None,
                        evidence: ev.EvidenceSource | None = None) -> Target:
    """The Target `plan` options name (the CLI's and the web's): the card from --gpu / --gpu-memory-gib; the text
    after `--` (or the pasted text) is the user's launch command when it names --model-path, else extra env and flags
    for the catalog command of --model."""
    card = from_options(gpu, gpu_memory_gib)
    if card is None:
        raise BadInput("plan needs a GPU: --gpu (see the catalog ids) or --gpu-memory-gib")
    given = extra.strip() if isinstance(extra, str) else extra
    parsed = parse_command(extra if isinstance(extra, str) else list(extra)) if extra is not None and given else None
    command_model = _model_of(parsed, version) if parsed is not None else None
    if command_model is not None:
        for name, v in (("--model", model), ("--quant", quant), ("--spec", spec), ("--draft", draft)):
            if v is not None:
                raise BadInput(f"{name}: the launch command after `--` already names the model and its setup; "
                               f"give {name} only without a command")
    elif model is None:
        raise BadInput("plan needs --model or a launch command with --model-path after `--`")
    t = Target(model=command_model or model or "", gpu=card, request_length=request_length, concurrency=concurrency,
               max_mem_fraction=max_mem_fraction, use_pin=pin, weights_gib=weights_gib, hub=hub, version=version,
               measured=measured, evidence=evidence)
    if command_model is not None:
        return replace(t, command=parsed)
    return replace(t, quant=quant, spec=spec, draft=draft, tp=tp, extra_flags=parsed.argv if parsed else (),
                   env=parsed.env if parsed else ())


def knobs(args: EngineArgs | None, reg: FlagRegistry, concurrency: int) -> list[list[Knob | None]]:
    """Each search dimension's options (None: leave it as the command has it), from what the command resolves to;
    a knob that would change nothing is not offered."""
    def a(key: str) -> Any:
        return None if args is None else args.get(key)

    mrr: list[Knob | None] = [None]
    if a("max_running_requests") != concurrency:
        mrr.append(Knob(label=f"--max-running-requests {concurrency}", cost=0.5,
                        sets=(("--max-running-requests", str(concurrency)),),
                        why=f"admit the {concurrency} requests asked for: the default cap sizes CUDA graphs, tables "
                            "and verify scratch for more"))
    graph: list[Knob | None] = [None]
    gbs = a("cuda_graph_decode_max_bs")
    option = "--cuda-graph-max-bs-decode" if reg.knows("--cuda-graph-max-bs-decode") else "--cuda-graph-max-bs"
    if reg.knows(option) and (gbs is None or gbs > concurrency):
        graph.append(Knob(label=f"{option} {concurrency}", cost=0.3, sets=((option, str(concurrency)),),
                          why=f"capture decode graphs up to {_requests(concurrency)}, not {gbs}: less graph memory"))
    chunk: list[Knob | None] = [None]
    now = a("chunked_prefill_size")
    for c in CHUNKS:
        if now is None or now <= 0 or c < now:
            halvings = math.log2(now / c) if now and now > 0 else math.log2(CHUNKS[0] / c) + 1
            chunk.append(Knob(label=f"--chunked-prefill-size {c}", cost=round(CHUNK_HALVING_COST * halvings, 3),
                              sets=(("--chunked-prefill-size", str(c)),),
                              why=f"prefill in chunks of {c:,} tokens" + (f", not {now:,}" if now and now > 0 else "")
                                  + ": a smaller activation peak on the first request"))
    dtype: list[Knob | None] = [None]
    if a("mamba_ssm_dtype") != "bfloat16":
        dtype.append(Knob(label="bfloat16 SSM state", cost=2.0, sets=(("--mamba-ssm-dtype", "bfloat16"),),
                          why="half the SSM state per slot (the page's bf16 option; a small numerics trade-off)"))
    strategy: list[Knob | None] = [None]
    if not a("disable_radix_cache"):
        have = a("mamba_radix_cache_strategy")
        flag = reg.by_option.get("--mamba-radix-cache-strategy")
        choices = (flag.choices or ()) if flag is not None else ()
        if "extra_buffer_lazy" in choices and have != "extra_buffer_lazy":
            strategy.append(Knob(label="radix strategy extra_buffer_lazy", cost=1.0,
                                 sets=(("--mamba-radix-cache-strategy", "extra_buffer_lazy"),),
                                 why="fewer state slots per running request (S) with prefix caching kept"))
        if "no_buffer" in choices and have != "no_buffer":
            strategy.append(Knob(label="radix strategy no_buffer", cost=3.0,
                                 sets=(("--mamba-radix-cache-strategy", "no_buffer"), ("--disable-overlap-schedule", None)),
                                 why="one state slot per request; prefix caching of state only at request ends"))
        strategy.append(Knob(label="radix cache off", cost=4.0, sets=(("--disable-radix-cache", None),),
                             why="no prefix cache: one state slot per request"))
    return [mrr, graph, chunk, dtype, strategy]


@dataclass(frozen=True, kw_only=True)
class Split:
    """How a fitting candidate sizes the state pool: the user's ratio or pin kept, the balanced ratio, else the pin,
    and the engine's sizing at it."""

    kind: str  # "ratio" | "pin"
    flags: tuple[tuple[str, str | None], ...]  # what it sets (empty: the command's own split kept)
    drops: tuple[str, ...]  # dests it removes (the other split flag)
    ratio: float | None
    pin: int
    served: int
    binding_pool: str | None
    args: EngineArgs
    sizing: dict[str, Any]  # loading.sizing_payload at the split
    kept: bool = False


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
    bound: ev.FractionBound | None = None  # how high the fraction may go for these settings
    loaded: Loaded | None = None


class Planner:
    """Evaluates candidates for one target; weights are computed once per resolved checkpoint layout."""

    def __init__(self, t: Target) -> None:
        if t.request_length <= 0 or t.concurrency <= 0:
            raise BadInput("--request-length and --concurrency must be positive integers")
        self.t = t
        self.reg = for_version(t.version).registry()
        if t.command is not None:
            self.ckpt = Checkpoint(ref=t.model, quant=None, note="the launch command's --model-path")
            self.base = t.command.argv
            self.env = t.command.env
            self.program = t.command.program  # the launcher as typed (python3 -m ..., sglang serve), kept
            self.positional = t.command.positional_model
        else:
            self.ckpt = checkpoint_for(t.model, t.quant)
            spec = spec_flags(t.spec, self.ckpt.ref, t.draft)
            self.base = ("--model-path", self.ckpt.ref) + self.ckpt.flags \
                + (("--tp-size", str(t.tp)) if t.tp > 1 else ()) + spec + t.extra_flags
            self.env = t.env
            self.program = LaunchCommand().program
            self.positional = False
        self.user_fraction = _float(value_of(self.base, "mem_fraction_static", self.reg))
        self._weights: dict[tuple[object, ...], WeightReport] = {}
        self._defaults: dict[tuple[str, ...], float] = {}
        self._points: dict[str, Sequence[ev.EvidencePoint]] = {}

    def command(self, argv: tuple[str, ...]) -> LaunchCommand:
        return LaunchCommand(env=self.env, program=self.program, argv=argv, positional_model=self.positional)

    def base_args(self) -> EngineArgs | None:
        """The command as given, resolved on the card (None when the engine rejects it as it stands)."""
        from hybridplan.engine.sglang.serving.loading import load

        try:
            return load(self.command(self.base), platform=self.t.gpu.platform(), version=self.t.version).args
        except EngineRefusal:
            return None

    def points(self, gpu: GPU) -> Sequence[ev.EvidencePoint]:
        """The evidence on a card (and its class) the caller handed in; none for a generic card."""
        if self.t.evidence is None or gpu.generic:
            return ()
        if gpu.id not in self._points:
            self._points[gpu.id] = self.t.evidence(NAME, gpu, for_version(self.t.version).version)
        return self._points[gpu.id]

    def default_fraction(self, argv: tuple[str, ...], loaded: Loaded, gpu: GPU) -> float:
        """The engine's own --mem-fraction-static for the command (the release's rule), without the user's value."""
        from hybridplan.engine.sglang.serving.loading import load

        if not loaded.args.explicit("mem_fraction_static"):
            return float(loaded.args["mem_fraction_static"])
        bare = without(argv, "mem_fraction_static", self.reg)
        key = (gpu.id,) + bare
        if key not in self._defaults:
            self._defaults[key] = float(load(self.command(bare), platform=gpu.platform(),
                                             version=self.t.version).args["mem_fraction_static"])
        return self._defaults[key]

    def weights(self, loaded: Loaded) -> WeightReport:
        from hybridplan.weights.quant import NAMED
        from hybridplan.engine.sglang.loads import weights_query
        from hybridplan.weights.report import model_weights

        a = loaded.args
        key = (a["model_path"], a["speculative_draft_model_path"], a["tp_size"], a["pp_size"], a["attn_dp_size"],
               a["is_multimodal"], a["speculative_algorithm"])
        if key not in self._weights:
            policy = NAMED[self.ckpt.estimated_quant] if self.ckpt.estimated_quant else None
            self._weights[key] = model_weights(weights_query(a, loaded.geometry), loaded.geometry, hub=self.t.hub, target_gib=self.t.weights_gib,
                                               policy=policy)
        return self._weights[key]

    def evaluate(self, c: Candidate, gpu: GPU | None = None, L: int | None = None, C: int | None = None) -> Outcome:
        """Resolve the candidate on the card, fix the mem fraction within the evidence, size the pools and check the
        target."""
        from hybridplan.engine.sglang.serving.loading import load

        gpu, L, C = gpu or self.t.gpu, L or self.t.request_length, C or self.t.concurrency
        argv = c.apply(self.base, self.reg)
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
        bound = self.bound(loaded, argv, gpu, weights, C)
        cap = min(MAX_FRACTION, bound.ceiling)
        if self.user_fraction is not None and self.user_fraction <= cap:  # the user's own value, when it serves
            kept = self._sized(c, loaded, self.timeline(loaded, gpu, weights), gpu, weights, argv, L, C, bound)
            if _fits_safely(kept) and kept.measured_failure is None:
                return kept
        # The slack need depends on the final command (its request cap sizes graphs and tables): settle the fraction
        # on the sized command in a few rounds, keeping the highest one whose slack holds it.
        moved, tl = self._at_safe_fraction(loaded, gpu, weights, cap)
        best = o = self._sized(c, moved, tl, gpu, weights, argv, L, C, bound)
        for _ in range(SAFE_ROUNDS):
            if not o.fits or o.timeline is None or o.mem_fraction is None:
                break
            want = max(MIN_FRACTION, min(o.timeline.max_safe_mem_fraction.value, cap))
            if abs(want - o.mem_fraction) < 0.001:
                break
            o = self._sized(c, *self._at(loaded, gpu, weights, want), gpu, weights, argv, L, C, bound)
            if _fits_safely(o) and (not _fits_safely(best) or _fraction(o) > _fraction(best)):
                best = o
        return self._below_measured_failure(best, c, loaded, gpu, weights, argv, L, C, bound)

    def bound(self, loaded: Loaded, argv: tuple[str, ...], gpu: GPU, weights: WeightReport,
              C: int) -> ev.FractionBound:
        """How high the evidence lets the fraction go for these settings (the request cap as the engine sizes it at
        its default fraction, when the command sets none)."""
        default = self.default_fraction(argv, loaded, gpu)
        running = loaded.args["max_running_requests"]
        if running is None:
            tl = self.timeline(self._at(loaded, gpu, weights, default)[0], gpu, weights)
            running = tl.pool_sizing.max_running_requests if tl.pool_sizing is not None else C
        return ev.fraction_bound(ev.Probe.of(loaded.args, gpu, running), round(default, 3), self.points(gpu))

    def _below_measured_failure(self, o: Outcome, c: Candidate, loaded: Loaded, gpu: GPU, weights: WeightReport,
                                argv: tuple[str, ...], L: int, C: int, bound: ev.FractionBound) -> Outcome:
        """A fraction a record shows running out of memory (capture or first request) is left for the step below it,
        when the model says that one still serves."""
        r = o.measured_failure
        if r is None or r.phase not in ("cuda_graph", "first_request"):
            return o
        lower = round(_fraction(o) - MEASURED_STEP, 3)
        while lower >= MIN_FRACTION:
            again = self._sized(c, *self._at(loaded, gpu, weights, lower), gpu, weights, argv, L, C, bound)
            if again.measured_failure is None:
                return again if _fits_safely(again) else o
            lower = round(lower - MEASURED_STEP, 3)
        return o

    def _sized(self, c: Candidate, loaded: Loaded, tl: MemoryTimeline, gpu: GPU, weights: WeightReport,
               argv: tuple[str, ...], L: int, C: int, bound: ev.FractionBound | None = None) -> Outcome:
        """The candidate at the fraction `loaded` carries: pools, the target check, the split and its timeline."""
        mfs = loaded.args["mem_fraction_static"]
        g = rt.sizes_of(loaded)
        pin = rt.pin_for(C, g)
        if tl.available_gib.value <= 0:
            return Outcome(candidate=c, fits=False, timeline=tl, mem_fraction=mfs, bound=bound, reason=(
                f"the weights ({weights.per_rank_bytes / GIB:.2f} GiB per rank) exceed the "
                f"{tl.pre_load_gib.value:.2f} GiB free before loading on {gpu.name}"))
        check = rt.pin_check(loaded, tl.budget, pin, C, L, g)
        if not check["fits"]:
            return Outcome(candidate=c, fits=False, reason=check["reason"], timeline=tl, mem_fraction=mfs,
                           needs=check["needs"], argv=argv, bound=bound)
        split = self._split(loaded, tl, g, pin, L, C, check)
        final_argv = with_flag(argv, "--mem-fraction-static", repr(mfs), self.reg)
        for dest in split.drops:
            final_argv = without(final_argv, dest, self.reg)
        for option, value in split.flags:
            final_argv = with_flag(final_argv, option, value, self.reg)
        final = self.timeline(replace(loaded, args=split.args), gpu, weights)  # the pools as the split sizes them
        # a generic card (--gpu-memory-gib alone) is in no page, so no record can show it failing
        r = self.t.measured(split.args, gpu.id) if self.t.measured and not gpu.generic else None
        if r is not None:
            return Outcome(candidate=c, fits=False, timeline=final, mem_fraction=mfs, argv=final_argv, split=split,
                           needs=check["needs"], measured_failure=r, bound=bound, reason=(
                               f"measured failing: record {r.label} ({r.phase or 'failed'} on build {r.build[:9]}, "
                               f"{r.source}) shows these settings failing on {gpu.name}"))
        return Outcome(candidate=c, fits=True, reason=None, argv=final_argv, mem_fraction=mfs, split=split,
                       timeline=final, needs=check["needs"], served=split.served, bound=bound,
                       loaded=replace(loaded, args=split.args),
                       notes=tuple(loaded.args.notes) + tuple(weights.notes))

    def timeline(self, loaded: Loaded, gpu: GPU, weights: WeightReport) -> MemoryTimeline:
        return build(loaded.args, loaded.geometry, gpu=gpu, weights=weights, version=self.t.version, draft=loaded.draft)

    def _at(self, loaded: Loaded, gpu: GPU, weights: WeightReport, mfs: float) -> tuple[Loaded, MemoryTimeline]:
        moved = replace(loaded, args=with_args(loaded.args, mem_fraction_static=mfs))
        return moved, self.timeline(moved, gpu, weights)

    def _at_safe_fraction(self, loaded: Loaded, gpu: GPU, weights: WeightReport,
                          cap: float) -> tuple[Loaded, MemoryTimeline]:
        """The command at the highest --mem-fraction-static up to `cap` whose slack holds the headroom (a few rounds:
        the slack need moves a little with the fraction through T and the request cap)."""
        mfs, tl = 1.0, self.timeline(loaded, gpu, weights)
        moved = loaded
        for _ in range(SAFE_ROUNDS):
            want = max(MIN_FRACTION, min(tl.max_safe_mem_fraction.value, cap, mfs))
            if want == mfs:
                break
            mfs = want
            moved, tl = self._at(loaded, gpu, weights, mfs)
            if tl.slack_fits_headroom:
                break
        return moved, tl

    def _split(self, loaded: Loaded, tl: MemoryTimeline, g: rt.Sizes, pin: int, L: int, C: int,
               check: dict[str, Any]) -> Split:
        """The command's own ratio or pin when it serves C; else the balanced ratio when one balances and serves C
        (the engine then splits any surplus evenly); else the pin."""
        per_rank = math.ceil(C / g.dp)
        a = loaded.args
        if a.explicit("mamba_full_memory_ratio") or a.explicit("max_mamba_cache_size"):
            try:
                sizing = rt.pool_split(loaded, tl.budget, a)
            except EngineRefusal:
                sizing = None
            if sizing is not None:
                served = min(sizing["max_mamba_cache_size"] // g.S,
                             sizing["max_total_num_tokens"] * max(1, g.dcp) // L)
                if served >= per_rank and sizing["max_running_requests"] >= per_rank:
                    pinned = a["max_mamba_cache_size"] is not None
                    return Split(kind="pin" if pinned else "ratio", flags=(), drops=(),
                                 ratio=None if pinned else a["mamba_full_memory_ratio"], pin=pin, served=served,
                                 binding_pool=sizing["binding_limit"], args=a, sizing=sizing, kept=True)
        if not self.t.use_pin and g.branch == "ratio" and g.cell > 0:
            bal = rt.exact_balance(rt.Search(loaded, tl.budget, g, L), rt.continuous_ratio(g, L))
            p = bal.point
            if (bal.ratio is not None and p is not None and p.sizing is not None and p.served >= per_rank
                    and p.sizing.max_running_requests >= per_rank):
                args = with_args(a, mamba_full_memory_ratio=bal.ratio)
                return Split(kind="ratio", flags=(("--mamba-full-memory-ratio", repr(bal.ratio)),), drops=(),
                             ratio=bal.ratio, pin=pin, served=p.served, binding_pool=bal.binding, args=args,
                             sizing=rt.pool_split(loaded, tl.budget, args))
        args = with_args(a, max_mamba_cache_size=pin)
        return Split(kind="pin", flags=(("--max-mamba-cache-size", str(pin)),), drops=("mamba_full_memory_ratio",),
                     ratio=None, pin=pin,
                     served=min(check["max_mamba_cache_size"] // g.S, check["kv_concurrency"]), args=args,
                     binding_pool="state_pool", sizing=rt.pool_split(loaded, tl.budget, args))

    def min_mem_fraction(self, best: Outcome) -> float | None:
        """The lowest --mem-fraction-static at which the chosen settings still serve the target (bisection)."""
        from hybridplan.engine.sglang.serving.loading import load

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

    def step_up(self, best: Outcome) -> dict[str, Any]:
        """What the recommended fraction buys over the engine's default with the same split: KV tokens, state slots
        and requests (or why the default does not serve)."""
        assert best.loaded is not None and best.bound is not None and best.split is not None
        default = best.bound.engine_default
        loaded = best.loaded
        at, tl = self._at(loaded, self.t.gpu, self.weights(loaded), default)
        g = rt.sizes_of(at)
        out: dict[str, Any] = {"engine_default": default, "recommended": best.mem_fraction}
        try:
            s = rt.pool_split(at, tl.budget, at.args)
        except EngineRefusal as exc:
            out.update({"serves_at_default": False, "why": f"the engine refuses: {exc.message}"})
            return out
        mine = best.split.sizing
        served = min(s["max_mamba_cache_size"] // g.S, s["max_total_num_tokens"] * max(1, g.dcp)
                     // self.t.request_length, s["max_running_requests"])
        mine_served = min(best.served, mine["max_running_requests"])
        out.update({
            "serves_at_default": served >= self.t.concurrency and tl.slack_fits_headroom,
            "kv_tokens": mine["max_total_num_tokens"] - s["max_total_num_tokens"],
            "state_slots": mine["max_mamba_cache_size"] - s["max_mamba_cache_size"],
            "requests": mine_served - served,
            "at_default": {"max_total_num_tokens": s["max_total_num_tokens"],
                           "max_mamba_cache_size": s["max_mamba_cache_size"], "served_concurrency": served}})
        return out


def _requests(n: int) -> str:
    return f"{n} request{'s' if n != 1 else ''}"


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


def _fraction(o: Outcome) -> float:
    """The mem fraction an evaluated candidate was sized at (every outcome past loading has one)."""
    assert o.mem_fraction is not None
    return o.mem_fraction


def _fits_safely(o: Outcome) -> bool:
    """It fits, and its slack holds the estimated headroom and the margin."""
    return o.fits and o.timeline is not None and o.timeline.slack_fits_headroom


def _needed(pl: Planner, args: EngineArgs | None, *, gpu: GPU | None = None, L: int | None = None,
            C: int | None = None) -> str:
    """", with <knobs>": the cheapest knobs the changed target still needs (empty when it needs none)."""
    for c in candidates(knobs(args, pl.reg, C or pl.t.concurrency)):
        if pl.evaluate(c, gpu=gpu, L=L, C=C).fits:
            return ", with " + ", ".join(c.changes) if c.changes else ""
    return ""


def _cheapest_changes(pl: Planner, base: Outcome, loosest: Candidate) -> list[dict[str, Any]]:
    """When no combination of the knobs fits: the target or the setup that would, cheapest first (a shorter L, a
    smaller C, another checkpoint, a larger card), each found with every knob available (the loosest candidate) and
    named with only the knobs it then needs."""
    t = pl.t
    args = pl.base_args()
    out: list[dict[str, Any]] = []
    if base.needs is not None and base.reason and "KV pool" in base.reason:
        L = largest_true(1, t.request_length - 1, lambda n: pl.evaluate(loosest, L=n).fits)
        if L >= 1:
            out.append({"change": f"request length {L:,} tokens (from {t.request_length:,})"
                                  + _needed(pl, args, L=L), "cost": 5.0})
    C = largest_true(1, t.concurrency - 1, lambda n: pl.evaluate(loosest, C=n).fits)
    if C >= 1:
        out.append({"change": f"concurrency {C} (from {t.concurrency})" + _needed(pl, args, C=C), "cost": 5.5})
    if t.command is None:
        for quant in ("fp8", "nvfp4-bf16-head", "nvfp4", "auto-round"):
            ck = checkpoint_for(t.model, quant)
            if quant != t.quant and not ck.estimated_quant and (pl.ckpt.ref, pl.ckpt.flags) != (ck.ref, ck.flags):
                other = Planner(replace(t, quant=quant))
                if other.evaluate(Candidate(knobs=loosest.knobs)).fits:
                    out.append({"change": ck.describe() + _needed(other, other.base_args()),
                                "cost": 5.8})
                    break
    for gpu in sorted(catalog(), key=lambda g: g.memory_mib):
        if gpu.memory_mib > t.gpu.memory_mib and gpu.vendor == t.gpu.vendor and pl.evaluate(loosest, gpu=gpu).fits:
            out.append({"change": f"a larger card: {gpu.id} ({gpu.memory_gib:.1f} GiB)" + _needed(pl, args, gpu=gpu),
                        "cost": 6.0})
            break
    return sorted(out, key=lambda d: d["cost"])


def _why(base: Outcome, t: Target) -> str:
    """The failure of the loosest settings, in numbers."""
    if base.needs is None or base.timeline is None:
        return base.reason or "it does not fit"
    n, tl = base.needs, base.timeline
    requests = f"{t.concurrency} request{'s' if t.concurrency != 1 else ''}"
    ceiling = f"; the evidence allows at most {base.bound.ceiling}" if base.bound is not None else ""
    return (f"{base.reason}. {requests} of {t.request_length:,} tokens need{'s' if t.concurrency == 1 else ''} "
            f"{n['state_pool_bytes'] / GIB:.2f} GiB of state + {n['spec_scratch_bytes'] / GIB:.2f} GiB of verify scratch "
            f"+ {n['kv_bytes'] / GIB:.2f} GiB of KV = {n['total_bytes'] / GIB:.2f} GiB; {t.gpu.name} leaves "
            f"{tl.rest_gib.value:.2f} GiB for the pools at mem fraction {base.mem_fraction} ("
            + ("your --max-mem-fraction" if t.max_mem_fraction is not None else
               f"its {tl.slack_gib.value:.2f} GiB slack holds an estimated {tl.headroom_gib.value:.2f} GiB of CUDA "
               f"graphs, activations and workspaces{ceiling}") + ")")


def breakdown(tl: MemoryTimeline, split: Split) -> dict[str, Any]:
    """Where the card's memory goes for the chosen command (GiB); the parts sum to the capacity (memory.total)."""
    return breakdown_of(tl.as_dict(), split.sizing["allocated"])


def _changes(pl: Planner, best: Outcome) -> list[dict[str, Any]]:
    """Every flag the answer sets differently from the command it started from: flag, old, new and why."""
    reg, base, final = pl.reg, pl.base, best.argv
    why: dict[str, str] = {}
    for k in best.candidate.knobs:
        for option, _ in k.sets:
            why[reg.by_option[option].dest] = k.why
    b = best.bound
    why["mem_fraction_static"] = (
        f"your --max-mem-fraction {pl.t.max_mem_fraction}" if pl.t.max_mem_fraction is not None or b is None else
        f"the highest the model says is safe, within the evidence ceiling {b.ceiling} (engine default "
        f"{b.engine_default})")
    s = best.split
    assert s is not None
    why["mamba_full_memory_ratio"] = (f"balances the state and KV pools for {pl.t.request_length:,}-token requests"
                                      if s.kind == "ratio" else "the pin replaces the ratio")
    why["max_mamba_cache_size"] = (f"{s.pin} state slots admit {_requests(pl.t.concurrency)} (no ratio balances them)"
                                   if s.kind == "pin" else "")
    out = []
    options = (tok.partition("=")[0] for tok in base + final if tok.startswith("--"))
    for dest in dict.fromkeys(reg.by_option[o].dest for o in options if reg.knows(o)):
        old, new = value_of(base, dest, reg), value_of(final, dest, reg)
        if old != new:
            out.append({"flag": reg.option_for(dest), "old": old, "new": new, "why": why.get(dest, "")})
    return out


def plan(t: Target) -> dict[str, Any]:
    """The `plan --json` payload: the command with the fewest changes that serves the target, what changed and why,
    the fraction against the engine's default and the evidence, its memory breakdown and binding limit, the
    verdict's confidence; or why nothing fits and the cheapest change that would."""
    pl = Planner(t)
    dims = knobs(pl.base_args(), pl.reg, t.concurrency)
    cands = candidates(dims)
    tried: list[dict[str, Any]] = []
    best: Outcome | None = None
    for c in cands:
        if best is not None and c.cost > best.candidate.cost:
            break
        o = pl.evaluate(c)
        tried.append({"changes": c.changes, "cost": c.cost, "fits": o.fits, "reason": o.reason,
                      "mem_fraction_static": o.mem_fraction})
        if o.fits and (best is None or -o.served < -best.served):
            best = o
    out: dict[str, Any] = {"target": {"model": t.model, "quant": t.quant, "gpu": t.gpu.as_dict(), "spec": t.spec,
                                      "tp": t.tp, "request_length": t.request_length, "concurrency": t.concurrency,
                                      "command": pl.command(pl.base).text() if t.command is not None else None},
                           "checkpoint": {"model_path": pl.ckpt.ref, "note": pl.ckpt.note,
                                          "alternatives": list(pl.ckpt.alternatives)},
                           "tried": tried}
    if best is None:
        loosest = Candidate(knobs=tuple(d[-1] for d in dims if d[-1] is not None))
        base = pl.evaluate(loosest)
        changes = _cheapest_changes(pl, base, loosest)
        out.update({"fits": False, "why": _why(base, t), "cheapest_change": changes[0]["change"] if changes else None,
                    "changes_that_fit": changes, "command": None, "changes": [], "search_changes": [],
                    "warnings": [pl.ckpt.note] if pl.ckpt.estimated else []})
        return out
    s, tl, loaded = best.split, best.timeline, best.loaded
    assert s is not None and tl is not None and loaded is not None  # a fitting outcome carries them
    sizing = s.sizing
    verdict = predict(loaded, tl, request_tokens=t.request_length, concurrency=t.concurrency, gpu=t.gpu,
                      evidence=pl.points(t.gpu))
    out.update({
        "fits": True, "command": pl.command(best.argv).text(), "argv": list(best.argv),
        "changes": _changes(pl, best), "search_changes": best.candidate.changes,
        "mem_fraction_static": best.mem_fraction, "min_mem_fraction_static": pl.min_mem_fraction(best),
        "mem_fraction": {**(best.bound.as_dict() if best.bound is not None else {}),
                         "recommended": best.mem_fraction, "user_max": t.max_mem_fraction,
                         "step_up": pl.step_up(best) if best.bound is not None else None},
        "confidence": verdict.confidence.as_dict() if verdict.confidence is not None else None,
        "verdict": verdict.as_dict(),
        "split": {"kind": s.kind, "kept": s.kept, "mamba_full_memory_ratio": s.ratio,
                  "mamba_full_memory_ratio_text": rt.ratio_text(s.ratio) if s.ratio is not None else None,
                  "max_mamba_cache_size_pin": s.pin, "binding_pool": s.binding_pool},
        # what runs at once is capped by the command's request cap; the pools alone would hold `pool_capacity`
        "served_concurrency": min(best.served, sizing["max_running_requests"]), "pool_capacity": best.served,
        "binding_limit": sizing["binding_limit"],
        "max_mamba_cache_size": sizing["max_mamba_cache_size"], "max_total_num_tokens": sizing["max_total_num_tokens"],
        "max_running_requests": sizing["max_running_requests"], "pool_budget_gib": sizing["pool_budget_gib"],
        "breakdown": breakdown(tl, s), "timeline": tl.as_dict(), "log_lines": sizing["log_lines"],
        "warnings": list(dict.fromkeys(best.notes + ((pl.ckpt.note,) if pl.ckpt.estimated else ()))),
    })
    if not tl.slack_fits_headroom:
        out["warnings"].append(f"the slack ({tl.slack_gib.value:.2f} GiB) is below what graph capture needs "
                               f"({tl.capture_need_gib:.2f} GiB) or the first requests ({tl.serve_need_gib:.2f} GiB), "
                               f"each with the {tl.margin_gib.value:.2f} GiB margin; estimated CUDA graphs, "
                               f"activations and workspaces: {tl.headroom_gib.note}")
    return out
