"""`results calibrate`: fit, per GPU, the constants the planner estimates from what verify measured, and report the
planner's error before and after.

The planner (hybridplan.engine.sglang.serving.timeline) estimates two things no engine rule gives:
  * the CUDA context (and NCCL state) held before the weights load: capacity - P. Each boot log gives it exactly
    (P = "Load weight begin" avail), so the fit is the mean per GPU, separately for one rank and several;
  * the graph + activation headroom the --mem-fraction-static slack must hold. A run bounds it: a served run shows
    headroom <= its slack P x (1 - mfs); a run that failed in graph capture or on the first request shows headroom >
    its slack; the graphs alone ("Capture ... mem usage") are a lower bound. The fit is the smallest per-GPU offset
    to the planner's formula that satisfies every bound.
Errors: P (GiB) and the pools the planner's budget yields (K, KV tokens), and which runs the planner says fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import mean
from typing import Any, TYPE_CHECKING

from hybridplan.errors import HybridPlanError
from hybridplan.verify.store import Run

if TYPE_CHECKING:
    from hybridplan.hardware.catalog import GPU
    from hybridplan.engine.api import Loaded
    from hybridplan.engine.api import MemoryTimeline

FAILED_FOR_HEADROOM = ("cuda_graph", "first_request")
STRICT_GIB = 1e-6  # a slack that was not enough bounds the headroom strictly from below


@dataclass(frozen=True, kw_only=True)
class Observation:
    """What one stored run says about its GPU, and the planner's timeline for the same command on it."""

    run: Run
    gpu: GPU
    loaded: Loaded  # resolved for the GPU
    world: int
    pre_load_gib: float
    graph_gib: float | None

    @property
    def context_gib(self) -> float:
        """What the card's torch-visible total loses before the weights load (the planner's context_gib_*)."""
        from hybridplan.engine.api import visible_estimate

        return float(visible_estimate(self.gpu).value) - self.pre_load_gib

    @property
    def slack_gib(self) -> float:
        return self.pre_load_gib * (1 - float(self.loaded.args["mem_fraction_static"]))

    @property
    def served(self) -> bool | None:
        """True when it served, False when it ran out of headroom, None when the run says nothing about it."""
        if self.run.outcome == "serves":
            return True
        phase = (self.run.failure or {}).get("phase")
        return False if phase in FAILED_FOR_HEADROOM else None


def _min_over_ranks(boot: dict[str, Any], key: str) -> float | None:
    values = [r[key] for r in (boot.get("ranks") or {"": boot}).values() if r.get(key) is not None]
    return min(values) if values else None


def observations(runs: list[Run]) -> tuple[list[Observation], list[dict[str, Any]]]:
    """The runs calibration can use (a catalog GPU, a command the engine model loads, a logged P), and why the
    others are skipped."""
    from hybridplan.engine.api import LaunchCommand
    from hybridplan.engine.api import load
    from hybridplan.hardware.catalog import lookup

    out: list[Observation] = []
    skipped: list[dict[str, Any]] = []
    for run in runs:
        P = _min_over_ranks(run.boot, "pre_load_avail_gib")
        if P is None:
            skipped.append({"run": run.id, "reason": "no 'Load weight begin' line: P is unknown"})
            continue
        try:
            gpu = lookup(run.key.gpu)
            env = tuple((k, v) for k, _, v in (e.partition("=") for e in run.key.env if "=" in e))
            cmd = LaunchCommand(env=env, argv=tuple(t for f in run.key.flags for t in f.split()))
            loaded = load(cmd, platform=gpu.platform())
        except HybridPlanError as exc:
            skipped.append({"run": run.id, "reason": exc.message})
            continue
        world = loaded.args["tp_size"] * loaded.args["pp_size"]
        out.append(Observation(run=run, gpu=gpu, loaded=loaded, world=world, pre_load_gib=P,
                               graph_gib=run.boot.get("cuda_graph_gib")))
    return out, skipped


def _timeline(o: Observation, pre_load_gib: float | None = None) -> MemoryTimeline:
    from hybridplan.engine.api import for_loaded

    return for_loaded(o.loaded, gpu=o.gpu, pre_load_gib=pre_load_gib)[0]


def _pools(tl: MemoryTimeline) -> tuple[int | None, int | None]:
    """K and KV tokens the engine sizes on the planner's budget (None: the engine would refuse)."""
    try:
        s = tl.sizing()
    except HybridPlanError:
        return None, None
    return s.max_mamba_cache_size, s.max_total_num_tokens


def _rel_err(pred: int | None, obs: int | None) -> float | None:
    if pred is None or not obs:
        return None
    return abs(pred - obs) / obs


def _mean(values: list[Any]) -> float | None:
    vals = [v for v in values if v is not None]
    return mean(vals) if vals else None


def _headroom_fit(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-GPU offset to the planner's headroom that breaks the fewest bounds (the smallest among equals).

    Each row bounds the true headroom: `lower` (graphs measured, or a slack that was not enough) and `upper` (a
    slack that was enough); as offsets to the planner's value they are `lower - planner` and `upper - planner`.
    """
    lower: list[float] = [r["lower"] - r["planner"] for r in rows if r["lower"] is not None]
    upper: list[float] = [r["upper"] - r["planner"] for r in rows if r["upper"] is not None]
    if not lower and not upper:
        return {"offset_gib": 0.0, "interval_gib": [None, None], "consistent": True, "bounds_broken": 0}

    def broken(offset: float) -> int:
        return sum(offset < lo for lo in lower) + sum(offset > hi for hi in upper)

    best = min(sorted(set(lower + upper)), key=broken)
    lo, hi = (max(lower) if lower else None), (min(upper) if upper else None)
    return {"offset_gib": best, "interval_gib": [lo, hi],
            "consistent": lo is None or hi is None or lo <= hi, "bounds_broken": broken(best)}


def calibrate(runs: list[Run]) -> dict[str, Any]:
    """Per GPU: the fitted context and headroom offset, and the planner's errors before and after."""
    from hybridplan.engine.api import context_estimate_gib

    obs, skipped = observations(runs)
    by_gpu: dict[str, list[Observation]] = {}
    for o in obs:
        by_gpu.setdefault(o.gpu.id, []).append(o)
    gpus: dict[str, Any] = {}
    for gpu_id, items in by_gpu.items():
        gpu = items[0].gpu
        fitted_ctx: dict[bool, float] = {}
        for multi in (False, True):
            group = [o for o in items if (o.world > 1) == multi]
            if group:
                fitted_ctx[multi] = mean(o.context_gib for o in group)
        rows: list[dict[str, Any]] = []
        head_rows: list[dict[str, Any]] = []
        for o in items:
            before = _timeline(o)
            P_after = o.pre_load_gib + o.context_gib - fitted_ctx[o.world > 1]  # visible - fitted context
            after = _timeline(o, pre_load_gib=P_after)
            k0, t0 = _pools(before)
            k1, t1 = _pools(after)
            K, T = o.run.boot.get("max_mamba_cache_size"), o.run.boot.get("kv_tokens")
            rows.append({"run": o.run.id, "world": o.world, "observed_pre_load_gib": o.pre_load_gib,
                         "pre_load_gib": [before.pre_load_gib.value, P_after],
                         "K": {"observed": K, "before": k0, "after": k1},
                         "kv_tokens": {"observed": T, "before": t0, "after": t1},
                         "served": o.served, "_tl": (before, after)})
            served = o.served
            lower = max(filter(None, [o.graph_gib, o.slack_gib + STRICT_GIB if served is False else None]),
                        default=None)
            head_rows.append({"run": o.run.id, "planner": after.slack_need_gib.value, "lower": lower,
                              "upper": o.slack_gib if served else None})
        fit = _headroom_fit(head_rows)
        for row in rows:
            before, after = row.pop("_tl")
            row["planner_says_fits"] = [before.slack_fits_headroom,
                                        after.slack_gib.value >= after.slack_need_gib.value + fit["offset_gib"]]
        judged = [r for r in rows if r["served"] is not None]
        gpus[gpu_id] = {
            "runs": len(items),
            "context_gib": {
                "planner": {"one_rank": context_estimate_gib(gpu, 1), "several_ranks": context_estimate_gib(gpu, 2)},
                "fitted": {"one_rank": fitted_ctx.get(False), "several_ranks": fitted_ctx.get(True)},
            },
            "headroom": fit,
            "error": {
                "pre_load_gib_mae": [_mean([abs(r["pre_load_gib"][i] - r["observed_pre_load_gib"]) for r in rows])
                                     for i in (0, 1)],
                "K_mean_rel": [_mean([_rel_err(r["K"][s], r["K"]["observed"]) for r in rows])
                               for s in ("before", "after")],
                "kv_tokens_mean_rel": [_mean([_rel_err(r["kv_tokens"][s], r["kv_tokens"]["observed"]) for r in rows])
                                       for s in ("before", "after")],
                "fits_wrong": [sum(1 for r in judged if r["planner_says_fits"][i] != r["served"]) for i in (0, 1)],
                "fits_judged": len(judged),
            },
            "rows": rows,
        }
    return {"gpus": gpus, "skipped": skipped,
            "note": "errors are [before, after]; the planner reads these constants from data/planner_constants.yaml "
                    "(hybridplan.engine.sglang.serving.constants: context_gib_single, context_gib_nccl, headroom_offset_gib, ...); "
                    "fitted values go under `gpus.<id>` there, or into timeline.build(constants=...)"}
