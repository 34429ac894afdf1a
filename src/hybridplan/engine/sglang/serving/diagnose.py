"""What to change after the failures users see, with a value the engine model says fits, from the log's own numbers.

Graph-capture and first-request out-of-memory: torch's "Tried to allocate X ... of which F is free" gives the
shortfall X - F; the --mem-fraction-static slack must grow by it (plus the planner's margin), i.e. the fraction
drops by (X - F + margin) / P; a first prefill can instead run a smaller --chunked-prefill-size. Too few state
slots (the state-cache refusals, or a cap below the requests asked): more slots x the bytes per slot the log shows,
moved to the state pool by --mamba-full-memory-ratio, added by a higher fraction, or made room for by a bfloat16
SSM state. Each value is re-sized with the engine model (same A and P) before it is offered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Sequence

from hybridplan.engine.sglang.releases import for_version
from hybridplan.engine.sglang.args import EngineArgs
from hybridplan.engine.sglang.types import PoolBudget
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.engine.sglang.serving.loading import Loaded, load
from hybridplan.engine.sglang.failures import STATE_REFUSAL, TOO_SMALL
from hybridplan.engine.sglang.logparse import BootLog, RankLog

GIB = 1 << 30
MAX_FRACTION = 0.95  # a higher --mem-fraction-static leaves no room for the CUDA context and graphs on any card
MIN_CHUNK = 256  # a smaller prefill chunk costs more than it saves; lower the fraction instead


@dataclass
class Change:
    """One suggested change: the flags, why, the numbers behind it, and the engine model's sizing with it."""

    flags: Sequence[tuple[str, str | None]]  # the first is the knob; a None value: the log lacks a number it needs
    why: str
    numbers: dict[str, Any] = field(default_factory=dict)
    fits: dict[str, Any] | None = None

    def as_dict(self, phase: str) -> dict[str, Any]:
        knob, value = self.flags[0] if self.flags else (None, None)
        return {"phase": phase, "knob": knob, "value": value,
                "flags": [f"{k} {v}" for k, v in self.flags if v is not None],
                "why": self.why, "numbers": self.numbers, "fits": self.fits}


class _Model:
    """The engine model for the logged command with a few flags changed, at the log's A and P (or a pool budget)."""

    def __init__(self, loaded: Loaded, A: float | None, P: float | None) -> None:
        self.loaded, self.A, self.P = loaded, A, P

    @property
    def args(self) -> EngineArgs:
        return self.loaded.args

    @cached_property
    def max_safe_fraction(self) -> float:
        """The planner's highest safe --mem-fraction-static at this A and P (its slack holds the graphs and
        activations it estimates); MAX_FRACTION when the planner cannot say."""
        from hybridplan.engine.sglang.serving.timeline import for_loaded

        if self.A is None or self.P is None:
            return MAX_FRACTION
        try:
            tl, _ = for_loaded(self.loaded, available_gib=self.A, pre_load_gib=self.P)
        except (BadInput, EngineRefusal, ValueError):
            return MAX_FRACTION
        return min(MAX_FRACTION, float(tl.max_safe_mem_fraction.value))

    def size(self, flags: list[tuple[str, str]], rest_gib: float | None = None) -> dict[str, Any] | None:
        """K, T, max running requests and the pool budget with `flags` added; None where the engine refuses."""
        cmd = self.loaded.command
        argv = [*cmd.argv] + [t for kv in flags for t in kv]
        try:
            loaded = load(cmd.with_argv(argv), version=self.loaded.version)
            if rest_gib is None:
                if self.A is None or self.P is None:
                    return None
                budget = for_version(loaded.version).pool_budget(self.A, self.P, loaded.args)
            else:
                budget = PoolBudget(rest_gib=rest_gib)
            s = for_version(loaded.version).size_pools(budget, loaded.args, loaded.geometry, loaded.draft)
        except (EngineRefusal, BadInput, ValueError):
            return None
        return {"pool_budget_gib": round(budget.rest_gib, 4), "max_mamba_cache_size": s.max_mamba_cache_size,
                "max_total_num_tokens": s.max_total_num_tokens, "max_running_requests": s.max_running_requests}


def _margin() -> float:
    """The planner's margin_gib (data/planner_constants.yaml): the largest capture-memory error on recorded boots."""
    from hybridplan.engine.sglang.serving.constants import constants_for

    return constants_for(None).margin_gib


def _fraction(x: float, up: bool) -> float:
    """A fraction rounded to 2 decimals, away from the failure (down when lowering, up when raising)."""
    return (math.ceil(x * 100 - 1e-9) if up else math.floor(x * 100 + 1e-9)) / 100


def _oom_rank(boot: BootLog) -> RankLog:
    """The rank whose torch OOM message the diagnosis reads (rank 0's, else the first rank that logged one)."""
    if boot.rank0.oom is not None:
        return boot.rank0
    return next((r for r in boot.ranks.values() if r.oom is not None), boot.rank0)


# ------------------------------------------------------------------------------------------ out of memory


def _lower_fraction(model: _Model, need_gib: float, how: str) -> Change:
    """--mem-fraction-static lowered so the slack grows by need_gib: old - need / P, re-sized at the new value."""
    old, P = model.args["mem_fraction_static"], model.P
    if P is None:
        return Change(flags=[("--mem-fraction-static", None)], why=(
            f"{how}; lower --mem-fraction-static by {need_gib:.2f} GiB / P, where P is the free memory before the "
            "weights: the log has no 'Load weight' line to read P from"), numbers={"need_gib": round(need_gib, 3)})
    new = _fraction(old - need_gib / P, up=False)
    numbers = {"mem_fraction_static": old, "need_gib": round(need_gib, 3), "pre_load_gib": P,
               "available_gib": model.A, "new_mem_fraction_static": new}
    text = (f"{how}; the slack P x (1 - mfs) must grow by {need_gib:.2f} GiB: {old} - {need_gib:.2f} / {P:.2f} = "
            f"{old - need_gib / P:.4f}, rounded down to {new}")
    fits = model.size([("--mem-fraction-static", str(new))]) if new > 0 else None
    if fits is not None:
        return Change(flags=[("--mem-fraction-static", str(new))], numbers=numbers, fits=fits, why=(
            f"{text}. At {new} the engine model sizes the pools from A = {model.A:.2f} and P = {P:.2f} GiB: "
            f"budget {fits['pool_budget_gib']:.2f} GiB, K = {fits['max_mamba_cache_size']}, "
            f"T = {fits['max_total_num_tokens']:,}, max_running_requests {fits['max_running_requests']}"))
    if model.args["mamba_ssm_dtype_resolved"] == "float32":
        flags = [("--mem-fraction-static", str(new)), ("--mamba-ssm-dtype", "bfloat16")]
        fits = model.size(flags) if new > 0 else None
        if fits is not None:
            return Change(flags=flags, numbers=numbers, fits=fits, why=(
                f"{text}; at {new} alone the engine model refuses (the pools no longer hold one request), and with "
                f"the SSM state in bfloat16 (half the fp32 state) it sizes K = {fits['max_mamba_cache_size']}, "
                f"T = {fits['max_total_num_tokens']:,}, max_running_requests {fits['max_running_requests']}"))
    return Change(flags=[], numbers=numbers, why=(
        f"{text}; the engine model refuses at that fraction even with a bfloat16 SSM state: the weights leave too "
        "little memory for the pools and the slack this needs (a smaller quantization or a larger card)"))


def _oom_text(rank: RankLog, where: str) -> tuple[float, str]:
    """What the slack must gain, and the sentence that says where the number comes from."""
    margin = _margin()
    oom = rank.oom
    if oom is not None and oom.shortfall_gib is not None:
        short = max(oom.shortfall_gib, 0.0)
        return short + margin, (
            f"{where} ran out of memory: torch tried to allocate {oom.requested_gib:.2f} GiB with {oom.free_gib:.2f} "
            f"GiB free, a shortfall of {short:.2f} GiB, + the planner's {margin:.2f} GiB margin")
    return margin, (f"{where} ran out of memory; the log has no 'Tried to allocate … of which … is free' numbers, so "
                    f"the slack grows by the planner's {margin:.2f} GiB margin only")


def _chunk(model: _Model, rank: RankLog, boot: BootLog, need_gib: float) -> Change | None:
    """A smaller --chunked-prefill-size for an OOM in the first prefill: the failed allocation is taken to scale
    with the batch's tokens (at least at the model's per-token prefill activations, an estimate)."""
    from hybridplan.engine.sglang.serving.constants import constants_for
    from hybridplan.engine.sglang.serving.headroom import per_token_bytes
    from hybridplan.models.widths import command_widths

    oom = rank.oom
    chunk = boot.rank0.summary.get("chunked_prefill_size") or model.args["chunked_prefill_size"]
    tokens = rank.last_prefill_tokens or chunk
    if not tokens or tokens <= 0 or oom is None:
        return None
    consts = constants_for(None)
    widths, _ = command_widths(model.args)
    per_model = per_token_bytes(model.args, model.loaded.geometry, widths, consts, prefill=True) \
        * (1 + consts.activation_fragmentation) / GIB
    per_token = max(oom.requested_gib / tokens, per_model)
    room = tokens - need_gib / per_token
    if room < MIN_CHUNK:
        return None
    new = 1 << int(math.log2(room))
    flags = [("--chunked-prefill-size", str(new))]
    fits = model.size(flags)
    if fits is None:
        return None
    return Change(flags=flags, fits=fits, numbers={
        "prefill_tokens": tokens, "chunked_prefill_size": chunk, "gib_per_token": round(per_token, 9),
        "need_gib": round(need_gib, 3), "new_chunked_prefill_size": new}, why=(
        f"the first prefill ({tokens:,} tokens) needs {need_gib:.2f} GiB less: at {per_token * 1024**2:.0f} KiB per "
        f"prefill token (the failed {oom.requested_gib:.2f} GiB over {tokens:,} tokens, at least the model's "
        f"{per_model * 1024**2:.0f} KiB of activations) a chunk of at most {room:,.0f} tokens fits; {new} is the power "
        f"of two below it. The pools do not change (K = {fits['max_mamba_cache_size']}, "
        f"T = {fits['max_total_num_tokens']:,})"))


def _out_of_memory(boot: BootLog, model: _Model, phase: str) -> list[Change]:
    rank = _oom_rank(boot)
    if phase == "cuda_graph":
        need, how = _oom_text(rank, "CUDA-graph capture")
        return [_lower_fraction(model, need, how)]
    prefill = rank.last_batch == "prefill"
    need, how = _oom_text(rank, "the first prefill" if prefill else "the first request")
    out = [_lower_fraction(model, need, how)]
    if prefill and (c := _chunk(model, rank, boot, need)) is not None:
        out.insert(0, c)
    return out


# ------------------------------------------------------------------------------------------ state slots


@dataclass(frozen=True)
class _Slots:
    """The state pool as the log shows it: K, the slots a request takes, per-slot GiB, and the pool budget."""

    K: int
    S: int
    per_slot_gib: float
    per_slot_from: str
    rest_gib: float | None
    rest_from: str


def _slots(boot: BootLog, model: _Model, message: str | None) -> _Slots | None:
    r = boot.rank0
    S = r.capped_slots_per_request
    K = r.max_mamba_cache_size
    rest, rest_from = None, "none"
    per, per_from = None, ""
    if message and (m := STATE_REFUSAL.search(message)):
        K, rest, per = int(m.group(1)), float(m.group(2)), float(m.group(3)) / 1024
        rest_from, per_from = "the refusal's total_rest_memory", f"the refusal's mamba_cache_per_req {m.group(3)} MB"
    if message and (m := TOO_SMALL.search(message)):
        K, S = int(m.group(1)), int(m.group(2))
    if per is None and r.conv_state_gib is not None and r.ssm_state_gib is not None and K is not None and K >= 0:
        per = (r.conv_state_gib + r.ssm_state_gib) / (K + 1)
        per_from = (f"the Mamba line: ({r.conv_state_gib:.2f} + {r.ssm_state_gib:.2f}) GiB over K + 1 = {K + 1} "
                    "rows")
    if per is None:
        per = _stage_per_req(model.loaded) / GIB
        per_from = "the engine model's; the log shows no Mamba line"
    if rest is None and model.A is not None and model.P is not None:
        rest = for_version(model.args.version).pool_budget(model.A, model.P, model.args).rest_gib
        rest_from = "A - P x (1 - mfs) - mm"
    if K is None:
        return None
    return _Slots(K=K, S=S or for_version(model.args.version).slots_per_request(model.args), per_slot_gib=per,
                  per_slot_from=per_from, rest_gib=rest, rest_from=rest_from)


def _first_fit(model: _Model, base: list[tuple[str, str]], flag: str, values: list[str], want: int,
               rest: float | None) -> tuple[list[tuple[str, str]], dict[str, Any]] | None:
    """The first value of `flag` (with the `base` flags) at which the engine model boots with `want` requests."""
    for v in values:
        flags = [*base, (flag, v)]
        fits = model.size(flags, rest)
        if fits is not None and fits["max_running_requests"] >= want:
            return flags, fits
    return None


def _sized(fits: dict[str, Any]) -> str:
    return (f"the engine model sizes K = {fits['max_mamba_cache_size']}, T = {fits['max_total_num_tokens']:,}, "
            f"max_running_requests {fits['max_running_requests']} (pool budget {fits['pool_budget_gib']:.2f} GiB)")


def _per_slot_bf16(model: _Model, per_gib: float) -> float:
    """The per-slot GiB with a bfloat16 SSM state: the log's per-slot bytes x the engine model's bf16/fp32 ratio."""
    cmd = model.loaded.command
    bf16 = load(cmd.with_argv([*cmd.argv, "--mamba-ssm-dtype", "bfloat16"]), version=model.loaded.version)
    return per_gib * _stage_per_req(bf16) / _stage_per_req(model.loaded)


def _stage_per_req(loaded: Loaded) -> int:
    """The engine model's state bytes per slot on the largest PP stage (stage_per_req)."""
    return for_version(loaded.version).stage_per_req(loaded.args, loaded.geometry)


def _state(boot: BootLog, model: _Model, message: str | None, want: int, stop: bool) -> list[Change]:
    sl = _slots(boot, model, message)
    if sl is None:
        return []
    args = model.args
    need_slots = sl.S * want
    more = need_slots - max(sl.K, 0)
    base = (f"{'the boot stopped: ' if stop else ''}K = {sl.K} state slots, and {want} request"
            f"{'s take' if want > 1 else ' takes'} S = {sl.S} each: {more} more slots x "
            f"{sl.per_slot_gib * 1024:.2f} MiB per slot ({sl.per_slot_from}) = {more * sl.per_slot_gib:.2f} GiB more "
            "state")
    numbers = {"K": sl.K, "S": sl.S, "requests": want, "more_slots": more, "gib_per_slot": round(sl.per_slot_gib, 6),
               "state_gib_needed": round(more * sl.per_slot_gib, 4),
               "pool_budget_gib": None if sl.rest_gib is None else round(sl.rest_gib, 4)}
    ratio, old = args["mamba_full_memory_ratio"], args["mem_fraction_static"]
    ratio_branch = args["max_mamba_cache_size"] is None and not (args["disable_radix_cache"] and
                                                                 args["max_running_requests"] is not None)
    rest = sl.rest_gib if model.A is None or model.P is None else None  # None: size from A and P
    dtypes: list[tuple[list[tuple[str, str]], float, str]] = [([], sl.per_slot_gib, "")]
    if args["mamba_ssm_dtype_resolved"] == "float32":
        per16 = _per_slot_bf16(model, sl.per_slot_gib)
        dtypes.append(([("--mamba-ssm-dtype", "bfloat16")], per16,
                       f" and a bfloat16 SSM state ({per16 * 1024:.2f} MiB per slot, half the fp32 state)"))
    out: list[Change] = []
    for flags, per, dtype_text in dtypes:
        state = (need_slots + 1) * per  # (K + 1) rows: the engine's padding slot
        if flags and (fits := model.size(flags, rest)) is not None and fits["max_running_requests"] >= want:
            out.append(Change(flags=flags, numbers=numbers, fits=fits, why=(
                f"{base}; a bfloat16 SSM state halves the fp32 state per slot: {_sized(fits)}")))
            continue
        if ratio_branch and sl.rest_gib is not None and 0 < state < sl.rest_gib:
            r_new = state / (sl.rest_gib - state)
            values = [f"{math.ceil(r_new * 100 + k) / 100:g}" for k in range(40)]
            if (hit := _first_fit(model, flags, "--mamba-full-memory-ratio", values, want, rest)) is not None:
                out.append(Change(flags=hit[0][::-1], numbers={**numbers, "ratio": ratio}, fits=hit[1], why=(
                    f"{base}; the state pool takes r / (1 + r) of the {sl.rest_gib:.2f} GiB pool budget "
                    f"({sl.rest_from}), so {need_slots + 1} rows (K + 1){dtype_text} need r >= {r_new:.3f} (now "
                    f"{ratio}); at {hit[0][-1][1]} {_sized(hit[1])}, the rest staying with the KV pool")))
        if ratio_branch and sl.rest_gib is not None:
            share = ratio / (1 + ratio)
            gain = max(state / share - sl.rest_gib, 0.0)
            how = (f"{base}; at ratio {ratio} the pool budget must reach {need_slots + 1} rows{dtype_text} / "
                   f"{share:.3f} = {state / share:.2f} GiB (now {sl.rest_gib:.2f}, {sl.rest_from}): {gain:.2f} GiB more")
            if model.P is None:
                out.append(Change(flags=[("--mem-fraction-static", None), *flags], numbers=numbers, why=(
                    f"{how}; raise --mem-fraction-static by {gain:.2f} GiB / P, where P is the free memory before "
                    "the weights (the log has no 'Load weight' line to read it from)")))
                continue
            start = _fraction(old + gain / model.P, up=True)
            top = model.max_safe_fraction
            values = [f"{start + k / 100:.2f}" for k in range(20) if start + k / 100 <= top]
            if (hit := _first_fit(model, flags, "--mem-fraction-static", values, want, None)) is not None:
                out.append(Change(flags=hit[0][::-1], numbers={**numbers, "mem_fraction_static": old}, fits=hit[1],
                                  why=(f"{how} / P = {model.P:.2f}: {hit[0][-1][1]}, within the planner's highest "
                                       f"safe fraction {top} (graphs and activations still fit); {_sized(hit[1])}")))
        if args["max_mamba_cache_size"] is not None:
            v = str(need_slots * args["attn_dp_size"])
            if (hit := _first_fit(model, flags, "--max-mamba-cache-size", [v], want, rest)) is not None:
                out.append(Change(flags=hit[0][::-1], numbers=numbers, fits=hit[1], why=(
                    f"{base}; the pinned --max-mamba-cache-size {args['max_mamba_cache_size']} decides K: pin S x "
                    f"requests = {need_slots} per attention-DP rank{dtype_text}; {_sized(hit[1])}")))
    if not out:
        out.append(Change(flags=[], numbers=numbers, why=(
            f"{base}; no change of the ratio, the fraction (up to the planner's highest safe "
            f"{model.max_safe_fraction}) or the SSM dtype makes room for it "
            "in the engine model at these A and P (a larger card, or fewer requests)")))
    return out


# ------------------------------------------------------------------------------------------ entry point


def diagnose(boot: BootLog, loaded: Loaded, A: float | None, P: float | None) -> dict[str, Any] | None:
    """The `diagnosis` object of `logs check --json` (phase, knob, value, why; numbers, fits, alternatives), or None
    when the log shows none of the failures this knows."""
    model = _Model(loaded, A, P)
    failure = boot.rank0.failure
    r = boot.rank0
    if failure is not None and failure.phase in ("cuda_graph", "first_request"):
        phase, changes = failure.phase, _out_of_memory(boot, model, failure.phase)
    elif failure is not None and failure.phase == "state_pool":
        phase, changes = "state_pool", _state(boot, model, failure.message, 1, True)
    elif r.capped_requests == 0:
        phase, changes = "state_pool", _state(boot, model, None, 1, True)
    elif r.capped_requests is not None and (asked := _asked(r, loaded)) and r.capped_requests < asked:
        phase, changes = "state_pool", _state(boot, model, None, asked, False)
    else:
        return None
    if not changes:
        return None
    out = changes[0].as_dict(phase)
    out["alternatives"] = [c.as_dict(phase) for c in changes[1:]]
    return out


def _asked(r: RankLog, loaded: Loaded) -> int | None:
    """The max_running_requests the server was asked for (the command's, else the log's server_args)."""
    asked = loaded.args["max_running_requests"]
    if asked is None:
        asked = r.logged_max_running_requests
    return None if asked is None else max(1, asked // loaded.args["attn_dp_size"])
