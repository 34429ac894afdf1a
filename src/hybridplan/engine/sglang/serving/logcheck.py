"""`logs check`: feed a boot log's own memory numbers into the engine model with the launch command, and compare
what it predicts with what the log says, line by line, naming the first rule that explains each difference.

Proxies (the engine's inputs are not logged as such):
  A ~ MIN over ranks of the last "Load weight end" avail before the pools (model_runner.py::load_model): local free
      memory after the target (and draft) weights. The engine's A (kv_cache_configurator.py::
      _profile_available_bytes) is the world MIN of free memory measured just before sizing, after gc and
      empty_cache; whatever is allocated between the two lines is not logged, so the true A can be a little lower.
  P ~ MIN over ranks of the first "Load weight begin" avail: local free memory right before loading. The engine's P
      (distributed/bootstrap.py::measure_pre_model_load_memory) is the world MIN taken just before it; nothing is
      allocated in between. ("Memory baseline taken" reports usage, not P.)
Both are printed with 2 decimals, so each is known to +-0.005 GiB.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

from hybridplan.engine.sglang.releases import for_version
from hybridplan.engine.sglang.command import LaunchCommand
from hybridplan.engine.sglang.args import EngineArgs
from hybridplan.engine.sglang.types import PoolBudget
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.engine.sglang.serving.loading import Loaded, load
from hybridplan.provenance import Source, Sourced
from hybridplan.engine.sglang.failures import STATE_REFUSAL, TOO_SMALL
from hybridplan.engine.sglang.log_version import choose
from hybridplan.engine.sglang.logparse import BootLog

GIB = 1 << 30
HALF_CENT = 0.005  # a value logged with .2f is known to +- this
MAX_UNLOGGED_GIB = 0.5  # a larger gap between "Load weight end" and the profile is not "unlogged allocations"
KVC = "mem_cache/kv_cache_configurator.py"

# rows in log order: (quantity, kind); kind decides how values compare
ROWS = (
    ("max_mamba_cache_size", "int"), ("conv_state_gib", "gib"), ("ssm_state_gib", "gib"),
    ("intermediate_ssm_gib", "gib"), ("intermediate_conv_window_gib", "gib"), ("kv_dtype", "str"),
    ("kv_tokens", "int"), ("k_gib", "gib"), ("v_gib", "gib"), ("max_running_requests", "int"),
)
_FOLLOWS_K = ("conv_state_gib", "ssm_state_gib", "intermediate_ssm_gib", "intermediate_conv_window_gib", "kv_tokens")
_FOLLOWS_T = ("k_gib", "v_gib")


def same(kind: str, predicted: object, observed: object) -> bool:
    """Equal as the log would print it: GiB to 2 decimals, counts exactly."""
    if predicted is None or observed is None:
        return False
    if kind == "gib":
        return f"{predicted:.2f}" == f"{observed:.2f}"
    return predicted == observed


@dataclass(frozen=True, kw_only=True)
class Proxies:
    """The engine inputs read off the log: A and P (GiB), each the MIN over ranks."""

    available_gib: float | None
    pre_load_gib: float | None
    pre_load_from: str = "begin"  # which line gave P: "begin", "end" (avail + mem usage) or "none"

    def as_dict(self) -> dict[str, Any]:
        p_note = ("P ~ MIN over ranks of the first 'Load weight begin' avail (pre_model_load_memory is measured just "
                  "before it, world MIN)") if self.pre_load_from == "begin" else (
            "P ~ MIN over ranks of the first 'Load weight end' avail + its mem usage (the log has no 'Load weight "
            "begin' line; usage = begin - end, so the sum is the begin avail to +-0.01)")
        return {
            "available_gib": Sourced(value=self.available_gib, source=Source.MEASURED, note=(
                "A ~ MIN over ranks of the last 'Load weight end' avail before the pools; the engine measures A "
                "just before sizing, so memory allocated in between (not logged) makes the true A lower")).as_dict(),
            "pre_load_gib": Sourced(value=self.pre_load_gib, source=Source.MEASURED, note=p_note).as_dict(),
        }


def proxies(boot: BootLog) -> Proxies:
    """A and P as the engine would have seen them: the world MIN of the logged per-rank values."""
    P, where = boot.pre_load_over_ranks()
    return Proxies(available_gib=boot.min_over_ranks("avail_after_load_gib"), pre_load_gib=P, pre_load_from=where)


class EngineView:
    """The engine model for one command, re-run under the hypotheses a check tries (K pinned, budget moved)."""

    def __init__(self, loaded: Loaded) -> None:
        self.loaded = loaded
        self.engine = for_version(loaded.version)
        self._pinned: dict[int, Loaded] = {}

    @property
    def args(self) -> EngineArgs:
        return self.loaded.args

    @cached_property
    def mm_gib(self) -> float:
        return self.engine.mm_reservation_gib(self.args)

    @cached_property
    def slots_per_request(self) -> int:
        return self.engine.slots_per_request(self.args)

    def rest(self, A: float, P: float, *, mm: bool = True) -> float:
        """total_rest_memory = A - P x (1 - mfs) - mm (budget.pool_budget)."""
        rest = self.engine.pool_budget(A, P, self.args).rest_gib
        return rest if mm else rest + self.mm_gib

    def pinned(self, K: int | None) -> Loaded:
        """The same command with K fixed (--max-mamba-cache-size is global: K x attention-DP)."""
        if K is None:
            return self.loaded
        if K not in self._pinned:
            cmd = self.loaded.command
            argv = (*cmd.argv, "--max-mamba-cache-size", str(K * self.args["attn_dp_size"]))
            self._pinned[K] = load(cmd.with_argv(argv), version=self.loaded.version)
        return self._pinned[K]

    def predict(self, rest_gib: float, *, K: int | None = None, A: float | None = None,
                P: float | None = None) -> dict[str, Any]:
        """What the engine allocates on rank 0 for this pool budget, as the log reports it (GiB unrounded).
        Raises EngineRefusal where the engine would refuse."""
        from hybridplan.dtypes import torch_name
        loaded = self.pinned(K)
        s = self.engine.size_pools(
            PoolBudget(rest_gib=rest_gib, available_gib=A, pre_load_gib=P), loaded.args, loaded.geometry,
            loaded.draft)
        alloc = self.engine.state_allocation(s, loaded.args, loaded.geometry)
        kv = self.engine.kv_bytes_allocated(s.max_total_num_tokens, loaded.args, loaded.geometry, s.cell.layers)
        mla = loaded.geometry.kv.kind == "mla"
        out = {
            "max_mamba_cache_size": s.max_mamba_cache_size, "conv_state_gib": alloc.conv_bytes / GIB,
            "ssm_state_gib": alloc.ssm_bytes / GIB, "kv_dtype": torch_name(loaded.args["kv_cache_torch_dtype"]),
            "kv_tokens": s.max_total_num_tokens, "k_gib": kv / GIB if mla else kv / 2 / GIB,
            "v_gib": None if mla else kv / 2 / GIB, "max_running_requests": s.max_running_requests,
        }
        if alloc.intermediate_ssm_bytes is not None and alloc.intermediate_conv_window_bytes is not None:
            out["intermediate_ssm_gib"] = alloc.intermediate_ssm_bytes / GIB
            out["intermediate_conv_window_gib"] = alloc.intermediate_conv_window_bytes / GIB
        return out

    def kv_gib(self, T: int) -> float:
        """K (or the one MLA) size the KV line prints for T tokens (memory_pool.py KV pools: T + page rows)."""
        cell = self.engine.kv_cell(self.args, self.loaded.geometry, self.loaded.draft)
        kv = self.engine.kv_bytes_allocated(T, self.args, self.loaded.geometry, cell.layers)
        return kv / GIB if self.loaded.geometry.kv.kind == "mla" else kv / 2 / GIB

    def requests(self, T: int, K: int, S: int) -> int:
        """resolve_max_num_reqs for observed T and K under S slots per request."""
        return self.engine.request_cap(T, K, S, self.args).max_running_requests

    def stage_per_req_mb(self) -> float:
        """stage_per_req / 2^20, as the state-cache refusal prints it (kv_cache_configurator.py::_handle_max_mamba_cache)."""
        return self.engine.stage_per_req(self.args, self.loaded.geometry) / (1 << 20)


@dataclass
class Row:
    quantity: str
    kind: str
    observed: Any  # the logged value: an int, a GiB float or a string, by kind
    predicted: Any
    rule: str = "match"
    explanation: str = ""

    @property
    def explained(self) -> bool:
        return self.rule != "unexplained"

    def as_dict(self) -> dict[str, Any]:
        def shown(v: object) -> object:
            return round(v, 4) if self.kind == "gib" and isinstance(v, float) else v

        return {"quantity": self.quantity, "observed": shown(self.observed), "predicted": shown(self.predicted),
                "match": self.rule == "match", "rule": self.rule, "explanation": self.explanation}


@dataclass
class _Scenario:
    """The hypotheses adopted so far: they carry over to later rows (e.g. no multimodal reservation)."""

    mm: bool = True
    notes: list[str] = field(default_factory=list)


class LogCheck:
    """Predicted vs observed for one log and one command."""

    def __init__(self, boot: BootLog, view: EngineView, log_version: str | None) -> None:
        self.boot, self.view, self.log_version = boot, view, log_version
        self.obs = boot.rank0
        self.px = proxies(boot)
        self.scenario = _Scenario()

    @property
    def has_profile(self) -> bool:
        return self.px.available_gib is not None and self.px.pre_load_gib is not None

    def _version_note(self) -> str:
        if self.log_version and self.log_version != self.view.loaded.version:
            return f" (the log is from sglang {self.log_version}, the model is {self.view.loaded.version})"
        return ""

    def _predict(self, *, dA: float = 0.0, dP: float = 0.0, K: int | None = None, mm: bool | None = None) -> dict[str, Any] | None:
        if self.px.available_gib is None or self.px.pre_load_gib is None:
            return None
        A, P = self.px.available_gib + dA, self.px.pre_load_gib + dP
        try:
            return self.view.predict(self.view.rest(A, P, mm=self.scenario.mm if mm is None else mm), K=K, A=A, P=P)
        except EngineRefusal as exc:
            # resolve_max_num_reqs refuses after K is fixed: its message still predicts K and the request count
            m = TOO_SMALL.search(exc.message)
            return None if m is None else {"max_mamba_cache_size": int(m.group(1)), "max_running_requests": int(m.group(3))}

    @cached_property
    def base(self) -> dict[str, Any] | None:
        return self._predict()

    # ------------------------------------------------------------------------------------------- rules

    def _rounding(self, row: Row) -> str | None:
        """The logged A and P are .2f-rounded: does any value within +-0.005 of them reproduce the row?"""
        if not self.has_profile:
            return None
        values = []
        for dA in (-HALF_CENT, HALF_CENT):
            for dP in (-HALF_CENT, HALF_CENT):
                p = self._predict(dA=dA, dP=dP)
                if p is not None and p.get(row.quantity) is not None:
                    values.append(p[row.quantity])
        if not values:
            return None
        hit = any(same(row.kind, v, row.observed) for v in values)
        if row.kind in ("int", "gib") and not hit:
            hit = min(values) - (HALF_CENT if row.kind == "gib" else 0) <= row.observed <= \
                max(values) + (HALF_CENT if row.kind == "gib" else 0)
        if not hit:
            return None
        adjusted = "" if self.scenario.mm else " (with the adjustments above)"
        return (f"within the .2f rounding of the logged A = {self.px.available_gib:.2f} and P = "
                f"{self.px.pre_load_gib:.2f} GiB{adjusted}: A and P +-0.005 give {_span(row.kind, values)}")

    def _follows(self, row: Row, rows: dict[str, Row]) -> str | None:
        """The row is right given the observed upstream value (K for the state lines and T, T for the KV sizes)."""
        K = rows.get("max_mamba_cache_size")
        T = rows.get("kv_tokens")
        if row.quantity in _FOLLOWS_K and K is not None and K.observed is not None and K.rule != "match":
            if row.quantity == "kv_tokens" and not self.has_profile:
                return None
            p = self._predict(K=K.observed) if self.has_profile else self._state_only(K.observed)
            if p is not None and same(row.kind, p.get(row.quantity), row.observed):
                return f"follows from K: with the logged K = {K.observed} the engine gives {_fmt(row.kind, p[row.quantity])}"
        if row.quantity in _FOLLOWS_T and T is not None and T.observed is not None:
            v = self.view.kv_gib(T.observed)
            if same(row.kind, v, row.observed) and (T.rule != "match" or row.predicted is None):
                return f"follows from #tokens: {T.observed} tokens + one page of padding take {v:.2f} GiB"
        if row.quantity == "max_running_requests" and K is not None and T is not None and None not in (
                K.observed, T.observed) and (K.rule != "match" or T.rule != "match" or row.predicted is None):
            n = self.view.requests(T.observed, K.observed, self.view.slots_per_request)
            if n == row.observed:
                return (f"follows from the logged K = {K.observed} and T = {T.observed} "
                        f"(resolve_max_num_reqs with S = {self.view.slots_per_request})")
        return None

    def _state_only(self, K: int) -> dict[str, Any] | None:
        """The state lines for a pinned K when the log has no profile (any positive budget allocates K + 1 rows)."""
        try:
            return self.view.predict(1e6, K=K)
        except EngineRefusal:
            return None

    def _multimodal(self, row: Row) -> str | None:
        """The log's build reserves no multimodal memory (no 'Reserving ... GB' line) where the modelled release does."""
        if (not self.has_profile or not self.view.args["is_multimodal"] or self.view.mm_gib <= 0
                or self.obs.mm_reservation_gib is not None or row.quantity not in ("max_mamba_cache_size", "kv_tokens")):
            return None
        hits = []
        for dA in (0.0, -HALF_CENT, HALF_CENT):
            for dP in (0.0, -HALF_CENT, HALF_CENT):
                p = self._predict(dA=dA, dP=dP, mm=False)
                if p is not None and same(row.kind, p.get(row.quantity), row.observed):
                    hits.append(p[row.quantity])
        if not hits:
            return None
        self.scenario.mm = False
        return (f"no multimodal reservation: the log has no 'Reserving ... GB of the KV budget' line, while {self.view.loaded.version} "
                f"takes {self.view.mm_gib:.2f} GiB off the pool budget for this multimodal model "
                f"({KVC}::mm_runtime_reservation_gb); without it the engine gives {row.observed}"
                + self._version_note())

    def _slots(self, row: Row, rows: dict[str, Row]) -> str | None:
        """max_running_requests = K // S with another S than the modelled release resolves for this command."""
        K, T = rows.get("max_mamba_cache_size"), rows.get("kv_tokens")
        if row.quantity != "max_running_requests" or K is None or T is None or None in (K.observed, T.observed):
            return None
        S = self.view.slots_per_request
        logged = self.obs.capped_slots_per_request
        if logged is not None:
            fits, how = [logged], "the cap line says"
        else:
            fits = [s for s in range(1, 9) if self.view.requests(T.observed, K.observed, s) == row.observed]
            how = "inferred from K // max_running_requests; no cap line was logged"
        if not fits or S in fits:
            return None
        s_log = fits[0] if len(fits) == 1 else fits
        strategy = self.view.args["mamba_radix_cache_strategy"]
        overlap = "off" if self.view.args["disable_overlap_schedule"] else "on"
        return (f"another S: the log's build keeps S = {s_log} state slots per request ({K.observed} // {fits[0]} = "
                f"{K.observed // fits[0]}; {how}); {self.view.loaded.version} resolves S = {S} for this command (radix strategy "
                f"{strategy}, overlap schedule {overlap}; {KVC}::_calculate_mamba_ratio)" + self._version_note())

    def _unlogged(self, row: Row, rows: dict[str, Row]) -> str | None:
        """T matches once A is moved by a small amount: memory taken between weight load and the profile."""
        if row.quantity != "kv_tokens" or not self.has_profile:
            return None
        K = rows["max_mamba_cache_size"].observed if "max_mamba_cache_size" in rows else None

        def tokens(dA: float) -> int | None:
            p = self._predict(dA=dA, K=K)
            return None if p is None else p["kv_tokens"]

        lo, hi = -MAX_UNLOGGED_GIB, MAX_UNLOGGED_GIB
        t_lo, t_hi = tokens(lo), tokens(hi)
        if t_lo is None or t_hi is None or not t_lo <= row.observed <= t_hi:
            return None
        for _ in range(60):  # T is non-decreasing in A: find the smallest shift that reaches the logged T
            mid = (lo + hi) / 2
            if (tokens(mid) or 0) >= row.observed:
                hi = mid
            else:
                lo = mid
        if tokens(hi) != row.observed:
            return None
        shift = -hi
        adjusted = " (with the adjustments above)" if not self.scenario.mm else ""
        if shift >= 0:
            return (f"unlogged allocations: T matches{adjusted} when A is {shift:.3f} GiB ({shift * 1024:.0f} MiB) "
                    f"below the logged 'Load weight end' avail, i.e. memory taken between the weight load and the "
                    f"profile ({KVC}::_profile_available_bytes measures A just before sizing)")
        return (f"T matches{adjusted} when A is {-shift:.3f} GiB above the logged 'Load weight end' avail: memory "
                f"freed between the weight load and the profile (gc + empty_cache before the measurement)")

    def _dtype(self, row: Row) -> str | None:
        if row.quantity != "kv_dtype":
            return None
        rule = self.view.args.arg("kv_cache_torch_dtype").rule
        return (f"another KV dtype: {self.view.loaded.version} resolves {row.predicted} for this command ({rule}); the log allocated "
                f"{row.observed}: the command or the build differ" + self._version_note())

    def _explain(self, row: Row, rows: dict[str, Row]) -> None:
        if same(row.kind, row.predicted, row.observed):
            row.rule, row.explanation = "match", ""
            return
        rules: tuple[tuple[str, Callable[[], str | None]], ...] = (
            ("follows", lambda: self._follows(row, rows)), ("rounding", lambda: self._rounding(row)),
            ("multimodal_reservation", lambda: self._multimodal(row)), ("slots_per_request", lambda: self._slots(row, rows)),
            ("unlogged_allocations", lambda: self._unlogged(row, rows)), ("kv_dtype", lambda: self._dtype(row)))
        for name, rule in rules:
            text = rule()
            if text:
                row.rule, row.explanation = name, text
                return
        row.rule = "unexplained"
        row.explanation = "no rule accounts for the difference" + self._missing_profile() + self._version_note()

    def _missing_profile(self) -> str:
        """Why A or P is unknown, naming only the lines the log really lacks."""
        if self.has_profile:
            return ""
        if self.px.available_gib is None:
            return ": the log has no 'Load weight end' line (avail mem=...), so A and P are unknown"
        return (": the log has no 'Load weight begin' line and its 'Load weight end' line has no mem usage, so P is "
                "unknown")

    def rows(self) -> list[Row]:
        base = self.base or {}
        out: dict[str, Row] = {}
        for quantity, kind in ROWS:
            observed = getattr(self.obs, quantity)
            if observed is None:
                continue
            row = Row(quantity=quantity, kind=kind, observed=observed, predicted=base.get(quantity))
            out[quantity] = row
            self._explain(row, out)
        return list(out.values())


# ------------------------------------------------------------------------------------------------ refusals


def _refusal_kind(message: str) -> str:
    for kind, needle in (("state_cache", "state cache. Computed"), ("too_small", "too small to serve"),
                         ("no_kv_memory", "Loaded weights leave no GPU memory"), ("no_tokens", "Not enough memory.")):
        if needle in message:
            return kind
    return "other"


def _boot_threshold(view: EngineView) -> float:
    """The smallest pool budget (GiB) at which the modelled release boots this command (bisection; the model is monotone)."""
    def boots(rest: float) -> bool:
        try:
            view.predict(rest)
            return True
        except EngineRefusal:
            return False

    lo, hi = 0.0, 1.0
    while not boots(hi):
        lo, hi = hi, hi * 2
        if hi > 1 << 20:
            raise BadInput("the engine model refuses this command at every pool budget")
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if boots(mid) else (mid, hi)
    return hi


def _refusal_bands(view: EngineView, threshold: float) -> list[tuple[str, str, float]]:
    """The modelled release's refusals below the threshold, nearest first: (kind, message, the lowest budget sampled with it).
    Sampled at threshold - 2^k x 1e-9 GiB, which resolves bands as thin as one KV token."""
    bands: list[tuple[str, str, float]] = []
    k = 0
    while True:
        rest = threshold - 1e-9 * 2**k
        try:
            view.predict(rest)
        except EngineRefusal as exc:
            kind = _refusal_kind(exc.message)
            if bands and bands[-1][0] == kind:
                bands[-1] = (kind, bands[-1][1], rest)
            else:
                bands.append((kind, exc.message, rest))
        if rest < -1.0:
            return bands
        k += 1


def check_refusal(boot: BootLog, view: EngineView, log_version: str | None) -> dict[str, Any] | None:
    """Compare a pool-sizing refusal in the log with the refusal the modelled release raises for the same command."""
    failure = boot.rank0.failure
    if failure is None or failure.phase not in ("state_pool", "kv_pool"):
        return None
    kind = _refusal_kind(failure.message)
    out: dict[str, Any] = {"observed": failure.message, "kind": kind, "rows": []}
    version = f" (the log is from sglang {log_version})" if log_version and log_version != view.loaded.version else ""
    if kind == "state_cache" and (m := STATE_REFUSAL.search(failure.message)):
        K, rest, per_mb = int(m.group(1)), float(m.group(2)), float(m.group(3))
        mb = view.stage_per_req_mb()
        rows = [Row(quantity="mamba_cache_per_req_mb", kind="gib", observed=per_mb, predicted=mb)]
        rows[0].rule = "match" if same("gib", mb, per_mb) else "unexplained"
        rows[0].explanation = "" if rows[0].rule == "match" else (
            "the state geometry differs: the command's model, TP or state dtypes are not the ones the log ran" + version)
        try:
            view.predict(rest)
            predicted_k, msg = None, f"{view.loaded.version} boots at that budget"
        except EngineRefusal as exc:
            msg = exc.message
            km = STATE_REFUSAL.search(exc.message)
            predicted_k = int(km.group(1)) if km else None
        krow = Row(quantity="max_mamba_cache_size", kind="int", observed=K, predicted=predicted_k)
        krow.rule = "match" if predicted_k == K else "unexplained"
        if krow.rule == "match":
            krow.explanation = f"{view.loaded.version} computes the same K from the logged total_rest_memory = {rest:.2f} GiB"
        elif view.args["speculative_algorithm"] is not None:
            krow.rule, krow.explanation = "spec_reservation", (
                "with speculative decoding the logged total_rest_memory is after the verify reservation, so K "
                "cannot be recomputed from it alone")
        rows.append(krow)
        out["predicted"] = msg
        out["rows"] = [r.as_dict() for r in rows]
        out["explanation"] = (
            f"total_rest_memory = A - P x (1 - {view.args['mem_fraction_static']}) - mm was {rest:.2f} GiB"
            + (": the free memory after loading was below the --mem-fraction-static slack, so no state slot fits"
               if rest < 0 else ": too little for one state slot at this ratio") + version)
        return out
    if kind == "too_small" and (m := TOO_SMALL.search(failure.message)):
        S = int(m.group(2))
        row = Row(quantity="slots_per_request", kind="int", observed=S, predicted=view.slots_per_request)
        row.rule = "match" if S == view.slots_per_request else "unexplained"
        out["rows"] = [row.as_dict()]
        out["explanation"] = f"K = {m.group(1)} // S = {S} leaves no request ({KVC}::resolve_max_num_reqs)" + version
        return out
    threshold = _boot_threshold(view)
    bands = _refusal_bands(view, threshold)
    kinds = [b[0] for b in bands]
    out["boot_threshold_gib"] = round(threshold, 4)
    out["predicted"] = [{"kind": kind, "message": msg, "below_gib": round(threshold, 6) if i == 0 else
                         round(bands[i - 1][2], 6)} for i, (kind, msg, _) in enumerate(bands)]
    state = ""
    if view.args["max_mamba_cache_size"] is not None:
        p = view.predict(threshold + 1.0)
        state = (f" (the pinned --max-mamba-cache-size {view.args['max_mamba_cache_size']} takes "
                 f"{p['conv_state_gib'] + p['ssm_state_gib'] + p.get('intermediate_ssm_gib', 0):.2f} GiB of it)")
    text = (f"{view.loaded.version} boots this command only with a pool budget above {threshold:.4f} GiB{state}, so the log's "
            f"refusal means A - P x (1 - mfs) - mm was below that")
    if kind in kinds:
        i = kinds.index(kind)
        upper = threshold if i == 0 else bands[i - 1][2]
        text += (f"; {view.loaded.version} raises the same message for budgets in ({bands[i][2]:.6f}, {upper:.6f}] GiB"
                 + (f", and '{bands[-1][1].split('. ')[0]}.' below {bands[-2][2]:.6f} GiB"
                    if bands[-1][0] != kind and len(bands) > 1 else ""))
    else:
        text += f"; {view.loaded.version} refuses there with: {bands[0][1].split('. ')[0]}."
    if kind == "no_tokens" and kinds and kinds[-1] == "no_kv_memory":
        text += (". The log's message is the T <= 0 check (model_executor/pool_configurator.py::"
                 f"MemoryPoolConfig.__post_init__); {view.loaded.version} checks for a KV budget <= 0 after the state pool first "
                 f"({KVC}::_profile_available_bytes); a build without that check would report any budget below "
                 "the state pool this way")
    out["explanation"] = text + version
    return out


# ------------------------------------------------------------------------------------------------ entry point


def with_logged_fraction(command: LaunchCommand, boot: BootLog, version: str | None) -> tuple[Loaded, str | None]:
    """Load the command; without --mem-fraction-static, take the value the log's server_args line shows."""
    loaded = load(command, version=version)
    if loaded.args["mem_fraction_static"] is not None:
        return loaded, None
    logged = boot.rank0.logged_mem_fraction_static
    if logged is None:
        raise BadInput("the command has no --mem-fraction-static and the log shows none (server_args=...); the "
                       "engine's default depends on the GPU, so give the value the server ran with")
    loaded = load(command.with_argv((*command.argv, "--mem-fraction-static", str(logged))), version=version)
    return loaded, f"--mem-fraction-static {logged} from the log's server_args line"


def check_log(boot: BootLog, command: LaunchCommand, *, log_version: str | None = None,
              version: str | None = None) -> dict[str, Any]:
    """The `logs check --json` object: proxies, rows (predicted vs observed, rule, explanation), refusal. The
    release modelled: `version` (--engine-version) > `log_version` > what the log states > the default."""
    choice = choose(engine_version=version, log_version=log_version, in_log=boot.stated_version)
    loaded, note = with_logged_fraction(command, boot, choice.version)
    view = EngineView(loaded)
    checker = LogCheck(boot, view, choice.other_build)
    px = checker.px
    notes = [n for n in (choice.note, note) if n]
    out: dict[str, Any] = {"engine": {"name": "sglang", "version": loaded.version}, "log_version": choice.log_version,
                 "version_source": choice.source, "command": loaded.command.text(), "proxies": px.as_dict(),
                 "notes": notes}
    if px.available_gib is not None and px.pre_load_gib is not None:
        try:
            rest = view.rest(px.available_gib, px.pre_load_gib)
            out["proxies"]["pool_budget_gib"] = Sourced(value=round(rest, 4), source=Source.ENGINE_RULE, note=(
                f"A - P x (1 - {view.args['mem_fraction_static']}) - {view.mm_gib:.4f} multimodal "
                f"({KVC}::_profile_available_bytes)")).as_dict()
        except ValueError as exc:
            raise BadInput(str(exc)) from None
    rows = checker.rows()
    out["rows"] = [r.as_dict() for r in rows]
    refusal = check_refusal(boot, view, choice.other_build)
    if refusal is not None:
        out["refusal"] = refusal
    failure = boot.rank0.failure
    if failure is not None:
        out["failure"] = failure.as_dict()
        if failure.phase not in ("state_pool", "kv_pool"):
            out["notes"].append(_outside_the_model(failure.phase, boot, view))
    from hybridplan.engine.sglang.serving.diagnose import diagnose

    diagnosis = diagnose(boot, loaded, px.available_gib, px.pre_load_gib)
    if diagnosis is not None:
        out["diagnosis"] = diagnosis
    unexplained = [r for r in rows if not r.explained]
    compared = len(rows)
    if refusal is not None:  # the log's refusal held against the release's (its numbers, or the budget band)
        unexplained += [r for r in refusal["rows"] if r["rule"] == "unexplained"]
        compared += max(1, len(refusal["rows"]))
    out["missing"] = boot.missing()
    out["compared"] = compared
    out["explained"] = compared > 0 and not unexplained  # nothing compared is never "explained"
    return out


def _outside_the_model(phase: str, boot: BootLog, view: EngineView) -> str:
    """What the pool model says about a failure outside pool sizing (before the pools, or after them)."""
    P = boot.pre_load_over_ranks()[0]
    if phase == "weights":
        return ("the boot failed while loading the weights, before any pool was sized: the weights do not fit in the "
                "free memory" + (f" P = {P:.2f} GiB" if P is not None else "") + " (no pool-sizing rule applies)")
    if phase == "startup":
        return "the server stopped before loading any weight (argument checks or distributed init)"
    if phase == "killed":
        return "the process was killed (SIGKILL: the OOM killer, earlyoom, a timeout): not a pool-sizing failure"
    mfs = view.args["mem_fraction_static"]
    free = boot.rank0.avail_after_pools_gib
    slack = f"P x (1 - {mfs}) = {P * (1 - mfs):.2f} GiB" if P is not None else f"P x (1 - {mfs})"
    return (f"the boot failed at {phase}, after the pools: CUDA graphs, activations and the first request come out "
            f"of the --mem-fraction-static slack ({slack})"
            + (f"; {free:.2f} GiB were free after the pools" if free is not None else ""))


def _fmt(kind: str, v: object) -> str:
    return f"{v:.2f} GiB" if kind == "gib" else str(v)


def _span(kind: str, values: list[Any]) -> str:
    lo, hi = min(values), max(values)
    return _fmt(kind, lo) if lo == hi else f"{_fmt(kind, lo)} .. {_fmt(kind, hi)}"
