"""The GPU memory timeline of one rank, mirroring the engine's order, ending in the pool budget.

free before load (P) -> weights (target, then draft) -> A -> the --mem-fraction-static slack -> the pre-capture
reserve (post-capture mode) -> the multimodal reservation -> `total_rest_memory`, which the engine splits between
the state and KV pools. CUDA context and graph/activation headroom are planner estimates, labelled so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import import_module

from hybridplan.engine.args import EngineArgs
from hybridplan.engine.versions import engine_module
from hybridplan.errors import BadInput
from hybridplan.hardware.catalog import GPU
from hybridplan.models.geometry import ModelGeometry
from hybridplan.provenance import Source, Sourced
from hybridplan.weights.report import WeightReport, model_weights

GIB = 1 << 30
MIB = 1 << 20
# CUDA context + allocator/NCCL state before weights load. From the RTX 4090 TP2 boot log (tests/fixtures): the card's
# 23.99 GiB minus "Load weight begin. avail mem=22.93 GB" = 1.06 GiB with NCCL; a single rank has no NCCL buffers.
CONTEXT_GIB_SINGLE = 0.75
CONTEXT_GIB_NCCL = 0.30
UNIFIED_HOST_GIB = 8.0  # unified-memory boxes (GB10): the OS and host processes draw from the same pool


def _engine(version: str | None, part: str):
    return import_module(f"{engine_module(version).__name__}.{part}")


@dataclass(frozen=True, kw_only=True)
class MemoryTimeline:
    """Every step from an empty card to the pool budget, in GiB, each with its provenance."""

    gpu_id: str | None
    capacity_gib: Sourced | None
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
    headroom_gib: Sourced  # CUDA graphs + activations the slack must hold (estimate)
    max_safe_mem_fraction: Sourced  # the highest --mem-fraction-static whose slack still holds the headroom

    @property
    def budget(self):
        """The engine's PoolBudget for size_pools."""
        from hybridplan.engine.sglang_0_5_23.sizing import PoolBudget

        return PoolBudget(rest_gib=self.rest_gib.value, available_gib=self.available_gib.value,
                          pre_load_gib=self.pre_load_gib.value)

    @property
    def slack_fits_headroom(self) -> bool:
        return self.slack_gib.value >= self.headroom_gib.value

    def as_dict(self) -> dict:
        out: dict = {"gpu": self.gpu_id}
        for name in ("capacity_gib", "context_gib", "pre_load_gib", "target_weights_gib", "draft_weights_gib",
                     "available_gib", "mem_fraction_static", "slack_gib", "pre_capture_reserve_gib",
                     "mm_reservation_gib", "rest_gib", "headroom_gib", "max_safe_mem_fraction"):
            v = getattr(self, name)
            out[name] = v.as_dict() if v is not None else None
        out["slack_fits_headroom"] = self.slack_fits_headroom
        return out


def context_estimate_gib(gpu: GPU, world: int) -> float:
    """CUDA context and NCCL state before the weights (estimate), plus the host's share on unified memory."""
    return CONTEXT_GIB_SINGLE + (CONTEXT_GIB_NCCL if world > 1 else 0.0) + (UNIFIED_HOST_GIB if gpu.unified else 0.0)


def headroom_mib(args: EngineArgs, geo: ModelGeometry, version: str | None = None) -> tuple[float, str]:
    """CUDA graphs + activations outside the pools, sized by the engine's own mem-fraction heuristic without its
    10 GiB floor (memory_hook.py): 512 + 1.5 MiB per activation token + tp.pp/8 GiB + the graph reserve."""
    md = _engine(version, "memory_defaults")
    cg = _engine(version, "cuda_graph")
    g = cg.GraphConfig(decode_backend=args["cuda_graph_decode_backend"], decode_max_bs=args["cuda_graph_decode_max_bs"],
                       prefill_backend=args["cuda_graph_prefill_backend"], prefill_max_bs=args["cuda_graph_prefill_max_bs"],
                       prefill_bs=args["cuda_graph_prefill_bs"], prefill_rule="")
    mode = args["disaggregation_mode"]
    act = md.activation_tokens(pd_decode=mode == "decode", running=args["max_running_requests"] or g.decode_max_bs,
                               draft_tokens=args["speculative_num_draft_tokens"], chunked=args["chunked_prefill_size"],
                               max_prefill_tokens=args["max_prefill_tokens"])
    graph = md.reserve_for_graph_mb(g, pd_mode=mode, attn_dp=args["attn_dp_size"], mla=geo.kv.kind == "mla",
                                    deepep=args.get("moe_a2a_backend") == "deepep")
    tp_pp = args["tp_size"] * args["pp_size"] / 8 * 1024
    total = 512 + 1.5 * act + tp_pp + graph
    return total, (f"512 + 1.5 x {act} activation tokens + {tp_pp:.0f} (tp.pp) + {graph:.0f} graph MiB: the engine's "
                   "mem-fraction reserve (memory_hook.py) used as an estimate of graph + activation memory")


def build(args: EngineArgs, geo: ModelGeometry, *, gpu: GPU | None = None, weights: WeightReport | None = None,
          available_gib: float | None = None, pre_load_gib: float | None = None,
          version: str | None = None) -> MemoryTimeline:
    """The timeline for a resolved command on a GPU, or from measured A and P (a boot log's "Load weight" lines)."""
    budget = _engine(version, "budget")
    reserves = _engine(version, "reserves")
    for name, v in (("--available-gib", available_gib), ("--pre-load-gib", pre_load_gib)):
        if v is not None and (not math.isfinite(v) or v <= 0):
            raise BadInput(f"{name} must be a positive number, got {v}")
    world = args["tp_size"] * args["pp_size"]
    capacity = context = None
    if gpu is not None:
        capacity = Sourced(value=gpu.memory_gib, source=Source.INPUT if gpu.memory_source == "input" else Source.CONFIG,
                           note=f"{gpu.name}: memory.total {gpu.memory_mib} MiB ({gpu.memory_source})")
        context = Sourced(value=context_estimate_gib(gpu, world), source=Source.ESTIMATE,
                          note="CUDA context" + (" + NCCL" if world > 1 else "") +
                               (" + host share of unified memory" if gpu.unified else ""))
    if pre_load_gib is not None:
        P = Sourced(value=pre_load_gib, source=Source.MEASURED, note="--pre-load-gib (pre_model_load_memory)")
    elif gpu is not None:
        P = Sourced(value=capacity.value - context.value, source=Source.ESTIMATE,
                    note="memory.total - CUDA context (distributed/bootstrap.py::measure_pre_model_load_memory)")
    else:
        raise BadInput("the memory timeline needs a GPU (--gpu) or the boot log's --pre-load-gib")
    target = draft = None
    if available_gib is not None:
        A = Sourced(value=available_gib, source=Source.MEASURED, note="--available-gib (free after weights)")
    elif weights is not None:
        target = Sourced(value=weights.target_per_rank.value / GIB, source=weights.target_per_rank.source,
                         note=weights.target_per_rank.note)
        draft = Sourced(value=weights.draft_per_rank.value / GIB, source=weights.draft_per_rank.source,
                        note=weights.draft_per_rank.note)
        A = Sourced(value=P.value - target.value - draft.value, source=Source.ESTIMATE if
                    Source.ESTIMATE in (P.source, target.source, draft.source) else Source.ENGINE_RULE,
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
    reserve = reserves.pre_capture_reserve_gib(args, gpu_mib)
    pb = budget.pool_budget(A.value, P.value, args, reserve)
    mm = budget.mm_reservation_gib(args)
    head_mib, head_note = headroom_mib(args, geo, version)
    slack = P.value * (1 - mfs) if reserve is None else max(P.value * (1 - mfs), reserve)
    head = head_mib / 1024
    safe = math.floor((1 - head / P.value) * 1000) / 1000 if P.value > 0 else 0.0
    return MemoryTimeline(
        gpu_id=gpu.id if gpu is not None else None, capacity_gib=capacity, context_gib=context, pre_load_gib=P,
        target_weights_gib=target, draft_weights_gib=draft, available_gib=A, mem_fraction_static=mfs_s,
        slack_gib=Sourced(value=slack, source=Source.ENGINE_RULE,
                          note="P x (1 - mem_fraction_static)" + ("" if reserve is None else ", at least the reserve")
                               + " (kv_cache_configurator.py::_profile_available_bytes)"),
        pre_capture_reserve_gib=None if reserve is None else Sourced(
            value=reserve, source=Source.ENGINE_RULE, note=reserves.RULE + " (post-capture KV sizing: slack floor)"),
        mm_reservation_gib=Sourced(value=mm, source=Source.ENGINE_RULE,
                                   note="mm_runtime_reservation_gb" if mm else "not multimodal: none"),
        rest_gib=Sourced(value=pb.rest_gib, source=A.source if A.source is not Source.MEASURED else Source.ENGINE_RULE,
                         note="A - slack - multimodal reservation (total_rest_memory)"),
        headroom_gib=Sourced(value=head, source=Source.ESTIMATE, note=head_note),
        max_safe_mem_fraction=Sourced(value=safe, source=Source.ESTIMATE,
                                      note=f"1 - headroom / P = 1 - {head:.2f} / {P.value:.2f}, rounded down"),
    )


def for_loaded(loaded, *, gpu: GPU | None = None, available_gib: float | None = None, pre_load_gib: float | None = None,
               weights_gib: float | None = None, checkpoint_bytes: int | None = None,
               hub: bool = False) -> tuple[MemoryTimeline, WeightReport | None]:
    """The timeline of a loaded command (explain.Loaded); the weights are only needed when A is not measured."""
    weights = None
    if available_gib is None:
        weights = model_weights(loaded.args, loaded.geometry, hub=hub, target_gib=weights_gib,
                                checkpoint_bytes=checkpoint_bytes)
    tl = build(loaded.args, loaded.geometry, gpu=gpu, weights=weights, available_gib=available_gib,
               pre_load_gib=pre_load_gib, version=loaded.version)
    return tl, weights


def memory_payload(tl: MemoryTimeline, weights: WeightReport | None) -> dict:
    """The `memory` object of `explain --json`: the timeline, the weights and what they warn about."""
    warnings = []
    if tl.available_gib.value <= 0:
        warnings.append(f"the weights leave {tl.available_gib.value:.2f} GiB of the {tl.pre_load_gib.value:.2f} GiB "
                        "free before loading: the engine runs out of memory while loading them, before any pool is sized")
    return {"timeline": tl.as_dict(), "weights": weights.as_dict() if weights is not None else None,
            "warnings": warnings + (list(weights.notes) if weights is not None else [])}


def pool_budget_for(command, gpu: GPU, *, checkpoint_bytes: int | None = None, weights_gib: float | None = None,
                    version: str | None = None):
    """The engine's PoolBudget for a launch command on a catalog GPU (what `explain --gpu` sizes with), and the
    `memory` payload behind it. `checkpoint_bytes` / `weights_gib` replace the weights estimate."""
    from hybridplan.explain import load  # the shared command loader

    loaded = load(command, platform=gpu.platform(), version=version)
    tl, weights = for_loaded(loaded, gpu=gpu, weights_gib=weights_gib, checkpoint_bytes=checkpoint_bytes)
    return tl.budget, memory_payload(tl, weights)
