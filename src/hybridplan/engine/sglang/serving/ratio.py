"""`hybridplan ratio`: the --mamba-full-memory-ratio that balances the state and KV pools for a workload, and the pin.

Without a budget: the engine's continuous balance point r = (S + D) x state/slot / (L x KV/token), where the ratio
branch of _handle_max_mamba_cache gives each slot r/(1+r) of the budget divided over (1 + D/S) slots' worth.
With a budget: a search over the engine's own sizing for the ratio that maximises min(K // S, T // L) (per
attention-DP rank), which also sees the discontinuities the formula cannot (the +1 padding row, page flooring,
a --max-running-requests cap on the verify scratch that hands its unused part to KV).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from hybridplan.engine.sglang.releases import for_version
from hybridplan.engine.sglang.args import EngineArgs
from hybridplan.engine.sglang.command import LaunchCommand, parse_command
from hybridplan.engine.sglang.types import PoolBudget, PoolSizing
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.hardware.catalog import GPU
from hybridplan.engine.sglang.serving.overrides import with_args

if TYPE_CHECKING:
    from hybridplan.engine.sglang.serving.loading import Loaded

GIB = 1 << 30
FORMULA = "r = (S + D) x state_bytes_per_slot / (L x kv_bytes_per_token)"
PIN_FORMULA = "pin = ceil(C / attn_dp_size) x S x attn_dp_size  (S slots per request; verify states have their own buffer)"
BIG_RATIO = 1e9  # "r -> infinity": B -> the whole budget


def ratio_text(x: float) -> str:
    """The docs calculator's display: Math.round(x * 100) / 100 as a JS string ("4.59", "2.5", "11")."""
    v = math.floor(x * 100 + 0.5) / 100
    text = repr(v)
    return text[:-2] if text.endswith(".0") else text


@dataclass(frozen=True, kw_only=True)
class Sizes:
    """The per-rank numbers the balance depends on, as the engine computes them."""

    S: int
    D: int
    per_slot: int  # state bytes per slot on the largest PP stage (stage_per_req) + a ring the release charges per slot
    cell: int  # KV bytes per token the engine divides the KV budget by (draft KV folded in)
    cell_target: int  # the target's own KV bytes per token (what the docs calculators divide by)
    dp: int
    dcp: int
    branch: str  # which _handle_max_mamba_cache branch the command takes


def sizes_of(loaded: Loaded) -> Sizes:
    engine = for_version(loaded.version)
    args, geo = loaded.args, loaded.geometry
    S = engine.slots_per_request(args)
    D = engine.draft_states_per_request(args, geo)
    per = engine.stage_per_req(args, geo) + engine.ring_charges(args, geo)[0]
    cell = engine.binding_cell(args, geo, loaded.draft)
    if args["max_mamba_cache_size"] is not None:
        branch = "max_mamba_cache_size"
    elif args["disable_radix_cache"] and args["max_running_requests"] is not None:
        branch = "max_running_requests"
    else:
        branch = "ratio"
    return Sizes(S=S, D=D, per_slot=per, cell=cell.total, cell_target=cell.target, dp=args["attn_dp_size"],
                    dcp=args["dcp_size"], branch=branch)


def continuous_ratio(g: Sizes, L: int, cell: int | None = None) -> float | None:
    """The engine's balance point without integer effects; None when there is no KV side (pure state models).

    Under DCP each KV row holds dcp logical tokens (KVCacheConfigurator.logical_token_capacity), so a request of
    L tokens costs L / dcp rows of the per-row cell."""
    c = g.cell if cell is None else cell
    if c <= 0:
        return None
    return (g.S + g.D) * g.per_slot * max(1, g.dcp) / (L * c)


def pin_for(C: int, g: Sizes) -> int:
    """The smallest --max-mamba-cache-size that admits C requests: the engine divides the flag by attn_dp_size and
    caps requests at K // S per rank (resolve_max_num_reqs); the +1 padding row is allocated on top, not counted."""
    return math.ceil(C / g.dp) * g.S * g.dp


# ---------------------------------------------------------------------------------------------- exact search


@dataclass(frozen=True)
class Point:
    """The engine's sizing at one ratio: K, T and the two concurrencies (per attention-DP rank)."""

    ratio: float
    K: int
    T: int
    state_conc: int  # K // S
    kv_conc: int  # logical KV tokens // L
    sizing: PoolSizing | None  # None when the engine refuses
    refusal: EngineRefusal | None = None

    @property
    def served(self) -> int:
        return min(self.state_conc, self.kv_conc)


class Search:
    """The engine's own sizing as a function of the ratio (and of K, by inverting the ratio branch)."""

    def __init__(self, loaded: Loaded, budget: PoolBudget, g: Sizes, L: int) -> None:
        self.engine = for_version(loaded.version)
        self.loaded, self.budget, self.g, self.L = loaded, budget, g, L
        self.cache: dict[float, Point] = {}

    def at(self, r: float) -> Point:
        if r in self.cache:
            return self.cache[r]
        args = with_args(self.loaded.args, mamba_full_memory_ratio=r)
        try:
            s = self.engine.size_pools(self.budget, args, self.loaded.geometry, self.loaded.draft)
        except EngineRefusal as exc:
            K = self._k_only(args)
            pt = Point(ratio=r, K=K, T=0, state_conc=max(K, 0) // self.g.S, kv_conc=-1, sizing=None, refusal=exc)
        else:
            T = s.max_total_num_tokens * max(1, self.g.dcp)
            pt = Point(ratio=r, K=s.max_mamba_cache_size, T=T, state_conc=s.max_mamba_cache_size // self.g.S,
                       kv_conc=T // self.L, sizing=s)
        self.cache[r] = pt
        return pt

    def _k_only(self, args: EngineArgs) -> int:
        """K from the ratio branch alone (before any KV-side refusal)."""
        try:
            S = self.engine.slots_per_request(args)
            return self.engine.state_plan(self.budget.rest_gib, args, self.loaded.geometry, S).max_mamba_cache_size
        except EngineRefusal:
            return 0

    def ratio_for_k(self, K: int) -> float:
        """The smallest ratio whose ratio branch yields at least K slots (B = rest x r/(1+r) inverted, then checked)."""
        sz, args, geo = self.engine, self.loaded.args, self.loaded.geometry
        per = self.g.per_slot
        rest = self.budget.rest_gib * GIB
        replay_fixed = sz.ring_charges(args, geo)[1]
        if sz.reserves_spec_state(args, geo):
            D, S = self.g.D, self.g.S
            need = per * (1 + D) + K * (per * (1 + D / S))
        else:
            need = replay_fixed + per * (K + 1)
        if need >= rest:
            return math.inf
        r = need / (rest - need)
        for step in range(60):  # float rounding in B = rest x r/(1+r) can land one slot short: nudge up
            if self.at(r).K >= K:
                return r
            r += max(r * 1e-15, 1e-18) * 2 ** step
        return math.inf


def _bisect(lo: int, hi: int, ok: Callable[[int], bool]) -> int:
    """Smallest k in [lo, hi] with ok(k) (ok monotone false -> true); hi + 1 when none."""
    while lo <= hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid - 1
        else:
            lo = mid + 1
    return lo


def _nice_ratio(lo: float, hi: float, target: float | None, accept: Callable[[float], bool]) -> float:
    """The shortest decimal in [lo, hi) (nearest the continuous balance) that the engine confirms."""
    centre = min(max(target if target is not None else lo, lo), hi)
    for digits in range(0, 10):
        q: int = 10 ** digits
        for cand in sorted({math.floor(centre * q) / q, math.ceil(centre * q) / q, math.ceil(lo * q) / q},
                           key=lambda c: abs(c - centre)):
            if lo <= cand < hi and cand > 0 and accept(cand):
                return cand
    return lo


@dataclass(frozen=True, kw_only=True)
class Balance:
    ratio: float | None
    point: Point | None
    reason: str | None
    binding: str | None
    interval: tuple[float, float] | None
    k_interval: tuple[int, int] | None
    k_max: int


def exact_balance(search: Search, r_c: float | None) -> Balance:
    """The ratio maximising min(K // S, T // L) over the engine's sizing, or why none balances."""
    top = search.at(BIG_RATIO)
    k_max = top.K
    if k_max <= 0:
        msg = top.refusal.message if top.refusal else "no state slot fits"
        return Balance(ratio=None, point=top, reason=f"the budget holds no state slot at any ratio: {msg}",
                       binding="state_pool", interval=None, k_interval=None, k_max=k_max)

    def pt(K: int) -> Point:
        return search.at(search.ratio_for_k(K))

    first = pt(1)
    if first.kv_conc < 1 and first.refusal is None:
        return Balance(ratio=None, point=first, reason=(
            f"even with one state slot the KV pool holds {first.T:,} tokens, less than one {search.L:,}-token request"),
            binding="kv_pool", interval=None, k_interval=None, k_max=k_max)
    if top.refusal is None and top.state_conc < top.kv_conc:
        return Balance(ratio=None, point=top, reason=(
            f"no ratio balances: even as r grows without bound the state pool admits only {top.state_conc} requests "
            f"(K = {top.K}) while the KV pool holds {top.kv_conc} requests of {search.L:,} tokens; the verify scratch "
            "is reserved for --max-running-requests requests, not K/S, and the unused part goes to KV. "
            "Pin the state pool with --max-mamba-cache-size instead"),
            binding="state_pool", interval=None, k_interval=None, k_max=k_max)
    # the crossing: first K where the state side reaches the KV side
    k_star = _bisect(1, k_max, lambda K: pt(K).refusal is not None or pt(K).state_conc >= pt(K).kv_conc)
    cands = [k for k in (k_star - 1, k_star) if 1 <= k <= k_max and pt(k).refusal is None]
    if not cands:
        return Balance(ratio=None, point=first, reason="the engine refuses every split of this budget",
                       binding=None, interval=None, k_interval=None, k_max=k_max)
    best = max(pt(k).served for k in cands)
    if best < 1:
        return Balance(ratio=None, point=pt(cands[-1]), reason="no split serves even one request of this length",
                       binding="kv_pool", interval=None, k_interval=None, k_max=k_max)
    k_lo = max(1, _bisect(1, k_max, lambda K: pt(K).state_conc >= best))
    k_hi = _bisect(k_lo, k_max, lambda K: pt(K).refusal is not None or pt(K).kv_conc < best) - 1
    lo, hi = search.ratio_for_k(k_lo), search.ratio_for_k(k_hi + 1) if k_hi < k_max else BIG_RATIO
    r = _nice_ratio(lo, hi, r_c, lambda c: k_lo <= search.at(c).K <= k_hi and search.at(c).refusal is None)
    p = search.at(r)
    binding = "both" if p.state_conc == p.kv_conc else ("state_pool" if p.state_conc < p.kv_conc else "kv_pool")
    return Balance(ratio=r, point=p, reason=None, binding=binding, interval=(lo, hi), k_interval=(k_lo, k_hi),
                   k_max=k_max)


# ---------------------------------------------------------------------------------------------- the payload


def _loaded(command: LaunchCommand | str, gpu: GPU | None, version: str | None) -> Loaded:
    from hybridplan.engine.sglang.serving.loading import load

    return load(command if isinstance(command, LaunchCommand) else parse_command(command),
                platform=gpu.platform() if gpu is not None else None, version=version)


def pool_split(loaded: Loaded, budget: PoolBudget, args: EngineArgs) -> dict[str, Any]:
    from hybridplan.engine.sglang.serving.loading import sizing_payload

    return sizing_payload(replace(loaded, args=args), budget)


def pin_needs(loaded: Loaded, pin: int, C: int, L: int, g: Sizes) -> dict[str, int]:
    """Bytes one rank needs for the pin: the state pool with its padding row, the verify scratch, C x L KV tokens."""
    args = with_args(loaded.args, max_mamba_cache_size=pin)
    plan = for_version(loaded.version).state_plan(0.0, args, loaded.geometry, g.S)
    kv = math.ceil(C / g.dp) * L * g.cell // max(1, g.dcp)
    return {"state_pool_bytes": plan.state_bytes, "spec_scratch_bytes": plan.spec_scratch_bytes, "kv_bytes": kv,
            "total_bytes": plan.state_bytes + plan.spec_scratch_bytes + kv}


def pin_check(loaded: Loaded, budget: PoolBudget, pin: int, C: int, L: int, g: Sizes) -> dict[str, Any]:
    """Whether the engine starts with the pin and serves C requests of L tokens, and if not, why (in numbers)."""
    args = with_args(loaded.args, max_mamba_cache_size=pin)
    per_rank = math.ceil(C / g.dp)
    needs = pin_needs(loaded, pin, C, L, g)
    out: dict[str, Any] = {"needs": needs, "budget_bytes": int(budget.rest_gib * GIB)}
    try:
        s = for_version(loaded.version).size_pools(budget, args, loaded.geometry, loaded.draft)
    except EngineRefusal as exc:
        out.update({"fits": False, "rule": exc.rule, "reason": (
            f"the engine refuses to start ({exc.message.split('. ')[0]}): the pin's "
            f"{needs['state_pool_bytes'] / GIB:.2f} GiB of state + {needs['spec_scratch_bytes'] / GIB:.2f} GiB of verify "
            f"scratch leave nothing for KV in a {budget.rest_gib:.2f} GiB budget")})
        return out
    T = s.max_total_num_tokens * max(1, g.dcp)
    out.update({"max_mamba_cache_size": s.max_mamba_cache_size, "max_total_num_tokens": T,
                "max_running_requests": s.max_running_requests, "kv_concurrency": T // L,
                "binding_limit": s.requests.binding, "state_pool_bytes": s.state.state_bytes,
                "spec_scratch_bytes": s.state.spec_scratch_bytes, "kv_budget_bytes": s.kv_budget_bytes})
    reasons = []
    if T < per_rank * L:
        reasons.append(f"the KV pool holds {T:,} tokens; {per_rank} requests of {L:,} need {per_rank * L:,}")
    if s.max_running_requests < per_rank:
        reasons.append(f"max_running_requests resolves to {s.max_running_requests} per rank (bound by "
                       f"{s.requests.binding})" + (f"; set --max-running-requests {C}"
                                                   if s.requests.binding == "max_running_requests" else ""))
    out["fits"] = not reasons
    out["reason"] = "; ".join(reasons) or None
    return out


def _budget_for(loaded: Loaded, budget: float | PoolBudget | None,
                gpu: GPU | None) -> tuple[PoolBudget | None, dict[str, Any] | None]:
    """A PoolBudget from the caller's number, or from the GPU's memory timeline; None without either."""
    if budget is None and gpu is None:
        return None, None
    if budget is not None:
        if isinstance(budget, (int, float)):
            if not math.isfinite(budget):
                raise BadInput("the pool budget must be a finite number of GiB")
            budget = PoolBudget(rest_gib=float(budget))
        return budget, {"rest_gib": budget.rest_gib, "source": "input"}
    from hybridplan.engine.sglang.serving.timeline import for_loaded, memory_payload

    tl, weights = for_loaded(loaded, gpu=gpu)
    return tl.budget, {"rest_gib": tl.rest_gib.value, "source": tl.rest_gib.source.value,
                       "memory": memory_payload(tl, weights)}


def balanced_ratio(command: LaunchCommand | str, *, request_length: int, concurrency: int,
                   budget: float | PoolBudget | None = None, gpu: str | GPU | None = None,
                   version: str | None = None) -> dict[str, Any]:
    """The `ratio --json` payload: balanced ratio, binding pool, pin and whether it fits, with the formula's inputs."""
    if request_length <= 0 or concurrency <= 0:
        raise BadInput("--request-length and --concurrency must be positive integers")
    from hybridplan.hardware.catalog import lookup

    card = lookup(gpu) if isinstance(gpu, str) else gpu
    loaded = _loaded(command, card, version)
    g = sizes_of(loaded)
    L, C = int(request_length), int(concurrency)
    r_c = continuous_ratio(g, L)
    r_docs = continuous_ratio(g, L, g.cell_target)
    pin = pin_for(C, g)
    out: dict[str, Any] = {
        "engine": {"name": "sglang", "version": loaded.version}, "command": loaded.command.text(),
        "env": dict(loaded.command.env), "request_length": L, "concurrency": C, "attn_dp_size": g.dp,
        "concurrency_per_rank": math.ceil(C / g.dp), "slots_per_request": g.S, "draft_states_per_request": g.D,
        "state_bytes_per_slot": g.per_slot, "kv_bytes_per_token": g.cell, "kv_bytes_per_token_target": g.cell_target,
        "state_pool_branch": g.branch,
        "formula": {"text": FORMULA, "S": g.S, "D": g.D, "state_bytes_per_slot": g.per_slot, "L": L,
                    "kv_bytes_per_token": g.cell, "value": r_c, "pin_text": PIN_FORMULA, "C": C, "attn_dp_size": g.dp,
                    "pin": pin},
        "continuous_ratio": r_c,
        "docs_calculator_ratio": r_docs, "docs_calculator_ratio_text": ratio_text(r_docs) if r_docs else None,
        "max_mamba_cache_size_pin": pin, "pin_fits": None, "pin_check": None, "budget": None,
        "state_concurrency": None, "kv_concurrency": None, "search": None, "warnings": list(loaded.args.notes),
    }
    if g.cell != g.cell_target:
        out["warnings"].append(f"kv_bytes_per_token includes {g.cell - g.cell_target:,} B of draft KV per token "
                               "(the engine folds it into the cell); the docs calculators divide by the target's "
                               f"{g.cell_target:,} B only, giving {out['docs_calculator_ratio_text']}")
    ratio = r_c
    reason: str | None = None
    binding: str | None = "both"
    if r_c is None:
        reason, binding = "the model has no full-attention KV: the state pool takes r/(1+r) of the budget", "state_pool"
    if g.branch != "ratio":
        reason = (f"the command sizes the state pool by {'--max-mamba-cache-size' if g.branch == 'max_mamba_cache_size' else '--max-running-requests (radix cache off)'}, "
                  "so --mamba-full-memory-ratio has no effect")
        ratio, binding = None, None
    pool_budget, budget_info = _budget_for(loaded, budget, card)
    if pool_budget is not None:
        out["budget"] = budget_info
        out["pin_check"] = pin_check(loaded, pool_budget, pin, C, L, g)
        out["pin_fits"] = out["pin_check"]["fits"]
        if g.branch == "ratio" and r_c is not None:
            bal = exact_balance(Search(loaded, pool_budget, g, L), r_c)
            ratio, reason, binding = bal.ratio, bal.reason, bal.binding
            p = bal.point
            out["search"] = {"ratio_interval": list(bal.interval) if bal.interval else None,
                             "k_interval": list(bal.k_interval) if bal.k_interval else None, "k_max": bal.k_max,
                             "limit": None if p is None else {"ratio": p.ratio, "max_mamba_cache_size": p.K,
                                                              "max_total_num_tokens": p.T,
                                                              "state_concurrency": p.state_conc,
                                                              "kv_concurrency": p.kv_conc}}
            if bal.ratio is not None and p is not None:
                out["state_concurrency"], out["kv_concurrency"] = p.state_conc, p.kv_conc
                out["at_ratio"] = pool_split(loaded, pool_budget, with_args(loaded.args, mamba_full_memory_ratio=p.ratio))
                out["meets_concurrency"] = min(p.state_conc, p.kv_conc) >= math.ceil(C / g.dp)
    out["mamba_full_memory_ratio"] = ratio
    out["mamba_full_memory_ratio_text"] = ratio_text(ratio) if ratio is not None else None
    out["binding_pool"] = binding
    out["reason"] = reason
    return out
