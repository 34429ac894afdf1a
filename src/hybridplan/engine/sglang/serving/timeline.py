"""The GPU memory timeline of one rank, mirroring the engine's order, ending in the pool budget and what is left.

free before load (P) -> weights (target, then draft) -> A -> the --mem-fraction-static slack -> the pre-capture
reserve (post-capture mode) -> the multimodal reservation -> `total_rest_memory`, which the engine splits between
the state and KV pools -> the pools as allocated -> what must live outside them (planner.headroom). CUDA context and
the activation/graph headroom are planner estimates, labelled so; their constants are data (planner.constants).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hybridplan.engine.sglang.releases import for_version
from hybridplan.engine.sglang.args import EngineArgs
from hybridplan.engine.sglang.command import LaunchCommand
from hybridplan.engine.sglang.types import PoolBudget, PoolSizing
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.hardware.catalog import GPU, visible_estimate as catalog_visible
from hybridplan.models.geometry import DraftGeometry, ModelGeometry
from hybridplan.engine.sglang.serving import headroom as hr
from hybridplan.engine.sglang.serving.constants import PlannerConstants, constants_for, host_names
from hybridplan.models.widths import ModelWidths, command_widths
from hybridplan.provenance import Source, Sourced
from hybridplan.engine.sglang.loads import EAGLE_FAMILY, weights_query
from hybridplan.weights.report import WeightReport, model_weights

if TYPE_CHECKING:
    from hybridplan.engine.sglang.serving.loading import Loaded

GIB = 1 << 30
RUNTIME_PARTS = ("eager_activations", "sampling")  # headroom parts that exist only once requests run


@dataclass(frozen=True, kw_only=True)
class MemoryTimeline:
    """Every step from an empty card to the pools and the headroom, in GiB, each with its provenance."""

    gpu_id: str | None
    unified_total_bytes: int | None  # a unified-memory card's total, the host's MemTotal (None: the card's own memory)
    capacity_gib: Sourced | None  # memory.total (nvidia-smi / rocminfo)
    visible_gib: Sourced | None  # what torch sees as the total: capacity less the driver's reservation
    context_gib: Sourced | None
    pre_load_gib: Sourced  # P
    target_weights_gib: Sourced | None
    draft_weights_gib: Sourced | None
    available_gib: Sourced  # A
    mem_fraction_static: Sourced
    slack_gib: Sourced
    pre_capture_reserve_gib: Sourced | None
    mm_reservation_gib: Sourced
    rest_gib: Sourced  # total_rest_memory: what the state and KV pools share
    pools_gib: Sourced | None  # what the pools allocate (state, verify scratch, target + draft KV); None: refused
    draft_kv_gib: Sourced | None  # the draft's KV pool inside pools_gib (the engine folds it into the KV cell)
    headroom_gib: Sourced  # what lives outside the pools: graphs, activations, workspaces, tables (estimate)
    headroom_parts: tuple[hr.Part, ...]
    slack_need_gib: Sourced  # what the slack must hold: headroom - multimodal reservation + (pools - budget)
    margin_gib: Sourced  # kept free on top of slack_need: the calibration's error on recorded boots
    engine_reserve_gib: Sourced  # the engine's own default-fraction reserve, for reference (not used to fit)
    max_safe_mem_fraction: Sourced  # the highest --mem-fraction-static whose slack still holds slack_need
    constants: PlannerConstants
    pool_sizing: PoolSizing | None  # the engine's sizing of `budget` (computed once; None: refused)
    refusal: EngineRefusal | None  # why the engine refuses to size the pools, when it does

    @property
    def budget(self) -> PoolBudget:
        """The engine's PoolBudget for size_pools."""
        return PoolBudget(rest_gib=self.rest_gib.value, available_gib=self.available_gib.value,
                          pre_load_gib=self.pre_load_gib.value)

    def sizing(self) -> PoolSizing:
        """The engine's pool sizing on this budget; raises the engine's refusal where it refuses."""
        if self.pool_sizing is None:
            assert self.refusal is not None
            raise self.refusal
        return self.pool_sizing

    @property
    def slack_fits_headroom(self) -> bool:
        """Whether what is left outside the pools holds the headroom and the margin (slack >= need + margin)."""
        return bool(self.slack_gib.value >= self.serve_need_gib)

    @property
    def serve_need_gib(self) -> float:
        """What the slack must hold once the first request runs: the slack need and the margin."""
        return float(self.slack_need_gib.value + self.margin_gib.value)

    @property
    def capture_need_gib(self) -> float:
        """What the slack must hold by the end of graph capture: the serve need less the parts that exist only once
        requests run (RUNTIME_PARTS). The verdict's figure, and the one its warning states."""
        return self.serve_need_gib - sum(p.nbytes for p in self.headroom_parts if p.name in RUNTIME_PARTS) / GIB

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"gpu": self.gpu_id}
        for name in ("capacity_gib", "visible_gib", "context_gib", "pre_load_gib", "target_weights_gib", "draft_weights_gib",
                     "available_gib", "mem_fraction_static", "slack_gib", "pre_capture_reserve_gib",
                     "mm_reservation_gib", "rest_gib", "pools_gib", "draft_kv_gib", "headroom_gib", "slack_need_gib",
                     "margin_gib", "engine_reserve_gib", "max_safe_mem_fraction"):
            v = getattr(self, name)
            out[name] = v.as_dict() if v is not None else None
        out["slack_fits_headroom"] = self.slack_fits_headroom
        out["headroom_parts"] = [p.as_dict() for p in self.headroom_parts]
        out["constants"] = self.constants.as_dict()
        return out


def visible_estimate(gpu: GPU, constants: PlannerConstants | None = None) -> Sourced:
    """The total torch sees on the card (hardware/catalog.py::visible_estimate), with this card's driver reserve."""
    c = constants or constants_for(gpu.id)
    return catalog_visible(gpu, (c.driver_reserve_mib, c.note("driver_reserve_mib")))


def context_estimate_gib(gpu: GPU, world: int, constants: PlannerConstants | None = None) -> float:
    """CUDA context and NCCL state before the weights (estimate), plus the host's share on unified memory."""
    c = constants or constants_for(gpu.id)
    nccl = c.context_gib_nccl + c.context_gib_nccl_per_rank * (world - 2) if world > 1 else 0.0
    return c.context_gib_single + nccl + (c.unified_host_gib if gpu.unified else 0.0)


@dataclass(frozen=True)
class _Pools:
    """The sizing facts the headroom depends on."""

    running: int
    allocated_bytes: int | None
    draft_kv_bytes: int | None
    sizing: PoolSizing | None
    refusal: EngineRefusal | None


def _pools(budget: PoolBudget, args: EngineArgs, geo: ModelGeometry, draft: DraftGeometry | None, widths: ModelWidths,
           version: str | None) -> _Pools:
    """Size the pools (the engine's own sizing) and add up what they allocate, the draft's KV pool included."""
    engine = for_version(version)
    try:
        s = engine.size_pools(budget, args, geo, draft)
    except EngineRefusal as exc:
        return _Pools(running=args["max_running_requests"] or args["cuda_graph_decode_max_bs"] or 1,
                      allocated_bytes=None, draft_kv_bytes=None, sizing=None, refusal=exc)
    a = engine.state_allocation(s, args, geo)
    rows = s.max_total_num_tokens + args["page_size"]
    per_draft = s.cell.draft
    if per_draft == 0 and args["speculative_algorithm"] in EAGLE_FAMILY and s.cell.layers:
        # path-less MTP the engine does not price: the draft still allocates its layers' KV (§3.7)
        per_draft = s.cell.target // s.cell.layers * max(1, widths.mtp_layers)
    draft_kv = rows * per_draft
    allocated = (a.conv_bytes + a.ssm_bytes + (a.intermediate_ssm_bytes or 0) + (a.intermediate_conv_window_bytes or 0)
                 + engine.kv_bytes_allocated(s.max_total_num_tokens, args, geo, s.cell.layers) + draft_kv)
    return _Pools(running=s.max_running_requests, allocated_bytes=allocated, draft_kv_bytes=draft_kv, sizing=s,
                  refusal=None)


def build(args: EngineArgs, geo: ModelGeometry, *, gpu: GPU | None = None, weights: WeightReport | None = None,
          available_gib: float | None = None, pre_load_gib: float | None = None, version: str | None = None,
          draft: DraftGeometry | None = None, widths: tuple[ModelWidths, ModelWidths | None] | None = None,
          constants: PlannerConstants | None = None) -> MemoryTimeline:
    """The timeline for a resolved command on a GPU, or from measured A and P (a boot log's "Load weight" lines).

    `draft` is the draft geometry (its KV shares the pools), `widths` the target's and draft's config widths (read
    from the configs when omitted), `constants` the estimate constants (the GPU's from the data file when omitted).
    """
    engine = for_version(version)
    for name, v in (("--available-gib", available_gib), ("--pre-load-gib", pre_load_gib)):
        if v is not None and (not math.isfinite(v) or v <= 0):
            raise BadInput(f"{name} must be a positive number, got {v}")
    consts = constants or constants_for(gpu.id if gpu is not None else None)
    world = args["tp_size"] * args["pp_size"]
    capacity = context = visible = None
    if gpu is not None:
        visible = visible_estimate(gpu, consts)
        capacity = Sourced(value=gpu.memory_gib, source=Source.INPUT if gpu.memory_source == "input" else Source.CONFIG,
                           note=f"{gpu.name}: memory.total {gpu.memory_mib} MiB ({gpu.memory_source})")
        context = Sourced(value=context_estimate_gib(gpu, world, consts), source=Source.ESTIMATE,
                          note="CUDA context" + (" + NCCL" if world > 1 else "") +
                               (" + host share of unified memory (the engine reads an integrated device's free "
                                "memory as the host's available memory: utils/common.py::get_available_gpu_memory)"
                                if gpu.unified else "") + f" ({consts.origin})")
    if pre_load_gib is not None:
        P = Sourced(value=pre_load_gib, source=Source.MEASURED, note="--pre-load-gib (pre_model_load_memory)")
    elif visible is not None and context is not None:  # both set with a GPU
        P = Sourced(value=visible.value - context.value, source=Source.ESTIMATE,
                    note="torch-visible total - CUDA context (distributed/bootstrap.py::measure_pre_model_load_memory)")
    else:
        raise BadInput("the memory timeline needs a GPU (--gpu) or the boot log's --pre-load-gib")
    target = draft_w = None
    if available_gib is not None:
        A = Sourced(value=available_gib, source=Source.MEASURED, note="--available-gib (free after weights)")
    elif weights is not None:
        target = Sourced(value=weights.target_per_rank.value / GIB, source=weights.target_per_rank.source,
                         note=weights.target_per_rank.note)
        draft_w = Sourced(value=weights.draft_per_rank.value / GIB, source=weights.draft_per_rank.source,
                          note=weights.draft_per_rank.note)
        A = Sourced(value=P.value - target.value - draft_w.value, source=Source.ESTIMATE if
                    Source.ESTIMATE in (P.source, target.source, draft_w.source) else Source.ENGINE_RULE,
                    note="P - target weights - draft weights (both load before the pools are sized)")
    else:
        raise BadInput("the memory timeline needs the weights or the boot log's --available-gib")
    mfs = args["mem_fraction_static"]
    if mfs is None:
        raise BadInput("--mem-fraction-static is unset and the GPU is unknown: give --gpu or the flag")
    arg = args.arg("mem_fraction_static")
    mfs_s = Sourced(value=mfs, source=Source.EXPLICIT if args.explicit("mem_fraction_static") else Source.ENGINE_RULE,
                    note=arg.rule or "--mem-fraction-static")
    gpu_mib = gpu.memory_mib if gpu is not None else None
    reserve = engine.pre_capture_reserve_gib(args, gpu_mib)
    pb = engine.pool_budget(A.value, P.value, args, reserve)
    mm = engine.mm_reservation_gib(args)
    slack = P.value * (1 - mfs) if reserve is None else max(P.value * (1 - mfs), reserve)
    rest_src = A.source if A.source is not Source.MEASURED else Source.ENGINE_RULE
    rest = Sourced(value=pb.rest_gib, source=rest_src, note="A - slack - multimodal reservation (total_rest_memory)")
    target_widths, draft_widths = widths if widths is not None else command_widths(args)
    pools = _pools(pb, args, geo, draft, target_widths, version)
    head = hr.estimate(args, geo, target_widths, draft_widths=draft_widths, running=pools.running, mm_gib=mm,
                       consts=consts, gpu=gpu)
    over = 0.0 if pools.allocated_bytes is None else pools.allocated_bytes / GIB - pb.rest_gib
    released = weights.draft_released_per_rank / GIB if weights is not None else 0.0
    need = max(head.gib - mm + over - released, 0.0)  # what the draft hands back after sizing is free at capture
    margin = consts.margin_gib
    safe = math.floor((1 - (need + margin) / P.value) * 1000) / 1000 if P.value > 0 else 0.0
    pools_s = None if pools.allocated_bytes is None else Sourced(
        value=pools.allocated_bytes / GIB, source=rest_src,
        note="state + verify scratch + target KV + draft KV as allocated ((K + 1) state rows, T + page KV rows)")
    return MemoryTimeline(
        gpu_id=gpu.id if gpu is not None else None,
        unified_total_bytes=gpu.memory_bytes if gpu is not None and gpu.unified else None, capacity_gib=capacity, visible_gib=visible, context_gib=context,
        pre_load_gib=P,
        target_weights_gib=target, draft_weights_gib=draft_w, available_gib=A, mem_fraction_static=mfs_s,
        slack_gib=Sourced(value=slack, source=Source.ENGINE_RULE,
                          note="P x (1 - mem_fraction_static)" + ("" if reserve is None else ", at least the reserve")
                               + " (kv_cache_configurator.py::_profile_available_bytes)"),
        pre_capture_reserve_gib=None if reserve is None else Sourced(
            value=reserve, source=Source.ENGINE_RULE, note=engine.pre_capture_reserve_rule + " (post-capture KV sizing: slack floor)"),
        mm_reservation_gib=Sourced(value=mm, source=Source.ENGINE_RULE,
                                   note="mm_runtime_reservation_gb" if mm else "not multimodal: none"),
        rest_gib=rest, pools_gib=pools_s,
        draft_kv_gib=None if pools.draft_kv_bytes is None else Sourced(
            value=pools.draft_kv_bytes / GIB, source=Source.ENGINE_RULE,
            note="the draft's KV pool: T + page rows x the draft's bytes per token"),
        headroom_gib=Sourced(value=head.gib, source=Source.ESTIMATE, note=head.note()),
        headroom_parts=head.parts,
        slack_need_gib=Sourced(value=need, source=Source.ESTIMATE, note=(
            f"headroom {head.gib:.2f} - multimodal reservation {mm:.2f}"
            + (f" + pools beyond the budget {over:.2f}" if over >= 0 else f" - budget the pools leave unused {-over:.2f}")
            + (f" - draft embedding and lm_head released after sizing {released:.2f}" if released else "")
            + " GiB")),
        margin_gib=Sourced(value=margin, source=Source.ESTIMATE, note=consts.note("margin_gib")),
        engine_reserve_gib=hr.engine_reserve(args, geo, version),
        max_safe_mem_fraction=Sourced(value=safe, source=Source.ESTIMATE, note=(
            f"1 - (slack need + margin) / P = 1 - ({need:.2f} + {margin:.2f}) / {P.value:.2f}, rounded down")),
        constants=consts, pool_sizing=pools.sizing, refusal=pools.refusal,
    )


def for_loaded(loaded: Loaded, *, gpu: GPU | None = None, available_gib: float | None = None, pre_load_gib: float | None = None,
               weights_gib: float | None = None, checkpoint_bytes: int | None = None, hub: bool = False,
               constants: PlannerConstants | None = None) -> tuple[MemoryTimeline, WeightReport | None]:
    """The timeline of a loaded command (explain.Loaded); the weights are only needed when A is not measured."""
    weights = None
    if available_gib is None:
        weights = model_weights(weights_query(loaded.args, loaded.geometry), loaded.geometry, hub=hub, target_gib=weights_gib,
                                checkpoint_bytes=checkpoint_bytes)
    tl = build(loaded.args, loaded.geometry, gpu=gpu, weights=weights, available_gib=available_gib,
               pre_load_gib=pre_load_gib, version=loaded.version, draft=loaded.draft, constants=constants)
    return tl, weights


def memory_payload(tl: MemoryTimeline, weights: WeightReport | None) -> dict[str, Any]:
    """The `memory` object of `explain --json`: the timeline, the weights and what they warn about."""
    warnings = []
    if tl.available_gib.value <= 0:
        warnings.append(f"the weights leave {tl.available_gib.value:.2f} GiB of the {tl.pre_load_gib.value:.2f} GiB "
                        "free before loading: the engine runs out of memory while loading them, before any pool is sized")
    elif not tl.slack_fits_headroom:
        at = "at graph capture" if tl.slack_gib.value < tl.capture_need_gib else "on the first requests"
        warnings.append(f"--mem-fraction-static {tl.mem_fraction_static.value} leaves {tl.slack_gib.value:.2f} GiB of "
                        f"slack, but graph capture needs {tl.capture_need_gib:.2f} GiB and the first requests "
                        f"{tl.serve_need_gib:.2f} GiB (estimates, each with the {tl.margin_gib.value:.2f} GiB margin): "
                        f"expect an out-of-memory error {at}; the highest safe fraction is about "
                        f"{tl.max_safe_mem_fraction.value}")
    warnings += guarded_host_warnings(tl)
    return {"timeline": tl.as_dict(), "weights": weights.as_dict() if weights is not None else None,
            "warnings": warnings + (list(weights.notes) if weights is not None else [])}


def guarded_host_warnings(tl: MemoryTimeline) -> list[str]:
    """On a unified-memory card sized for the stock host (which swaps the host's growth out), what each named host
    whose out-of-memory guard acts on available memory (data/planner_constants.yaml hosts) needs beyond that."""
    if any(p.name == "host_reserve" for p in tl.headroom_parts) or tl.pool_sizing is None:
        return []
    if tl.unified_total_bytes is None:
        return []
    out = []
    for host in host_names():
        parts = {p.name: p.nbytes / GIB for p in hr.host_parts(tl.unified_total_bytes, constants_for(tl.gpu_id, host))}
        if not parts:
            continue
        need = tl.serve_need_gib + sum(parts.values())
        safe = math.floor((1 - need / tl.pre_load_gib.value) * 1000) / 1000
        out.append(f"on a host whose out-of-memory guard acts on available memory ({host}: its "
                   f"{parts['host_reserve']:.2f} GiB threshold and {parts['host_runtime']:.2f} GiB of the server's host "
                   f"growth stay in memory), the slack must hold {need:.2f} GiB: --mem-fraction-static "
                   f"{tl.mem_fraction_static.value} leaves {tl.slack_gib.value:.2f} GiB, and the highest safe fraction "
                   f"there is about {safe}")
    return out



def breakdown_of(timeline: dict[str, Any], alloc: dict[str, Any]) -> dict[str, Any]:
    """`breakdown` from payload dicts (a timeline's as_dict() and the sizing's `allocated`), so `explain --json`
    carries the same picture; parts a timeline lacks (no card: capacity, context) are None. The KV pool includes
    the draft's KV pool; what is left (`free_gib`) is the slack less what it must hold."""
    def value(key: str) -> Any:
        return (timeline.get(key) or {}).get("value")

    def source(key: str) -> str | None:
        return (timeline.get(key) or {}).get("source")

    state = (alloc["conv_state_bytes"] + alloc["ssm_state_bytes"]) / GIB
    scratch = ((alloc["intermediate_ssm_bytes"] or 0) + (alloc["intermediate_conv_window_bytes"] or 0)) / GIB
    kv = alloc["kv_bytes"] / GIB + (value("draft_kv_gib") or 0.0)
    free = value("available_gib") - state - scratch - kv - value("headroom_gib")
    capacity, visible = value("capacity_gib"), value("visible_gib")
    rows = {
        "driver_reserved_gib": (capacity - visible if capacity is not None and visible is not None else None,
                                source("visible_gib")),
        "context_gib": (value("context_gib"), "estimate"),
        "weights_gib": (value("target_weights_gib"), source("target_weights_gib")),
        "draft_weights_gib": (value("draft_weights_gib"), source("draft_weights_gib")),
        "state_pool_gib": (state, "engine rule"), "spec_scratch_gib": (scratch, "engine rule"),
        "kv_pool_gib": (kv, "engine rule"), "cuda_graphs_activations_gib": (value("headroom_gib"), "estimate"),
        "free_gib": (free, "estimate"),
    }
    out: dict[str, Any] = {k: v for k, (v, _) in rows.items()}
    out["capacity_gib"] = value("capacity_gib")
    out["sources"] = {k: src for k, (_, src) in rows.items()}
    return out


def pool_budget_for(command: LaunchCommand | str, gpu: GPU, *, checkpoint_bytes: int | None = None,
                    weights_gib: float | None = None,
                    version: str | None = None) -> tuple[PoolBudget, dict[str, Any]]:
    """The engine's PoolBudget for a launch command on a catalog GPU (what `explain --gpu` sizes with), and the
    `memory` payload behind it. `checkpoint_bytes` / `weights_gib` replace the weights estimate."""
    from hybridplan.engine.sglang.serving.loading import load

    loaded = load(command, platform=gpu.platform(), version=version)
    tl, weights = for_loaded(loaded, gpu=gpu, weights_gib=weights_gib, checkpoint_bytes=checkpoint_bytes)
    return tl.budget, memory_payload(tl, weights)
