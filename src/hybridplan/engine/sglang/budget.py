"""The pool budget (`total_rest_memory`) from a memory profile, as _profile_available_bytes computes it."""

from __future__ import annotations

from hybridplan.engine.sglang.args import EngineArgs
from hybridplan.engine.sglang.types import PoolBudget

KVC = "mem_cache/kv_cache_configurator.py"


def mm_reservation_gib(args: EngineArgs) -> float:
    """mm_runtime_reservation_gb: the VLM embedding cache (+ feature-transport pools), multimodal models only."""
    if not args["is_multimodal"]:
        return 0.0
    mb = args.env_int("SGLANG_VLM_CACHE_SIZE_MB", 100)
    if args["mm_feature_transport"] in ("cuda_ipc", "cuda_vmm"):
        mb += args.env_int("SGLANG_MM_FEATURE_CACHE_MB", 1024)
    return mb / 1024


def pool_budget(available_gib: float, pre_load_gib: float, args: EngineArgs,
                pre_capture_reserve_gib: float | None = None) -> PoolBudget:
    """rest = A - P x (1 - mfs) - mm (KVCacheConfigurator._profile_available_bytes).

    `pre_capture_reserve_gib` is the post-capture mode's slack floor for mambaish models
    (runtime_context.py::pre_capture_activation_reserve_mb); None when that mode is off (the default).
    """
    mfs = args["mem_fraction_static"]
    if mfs is None:
        raise ValueError("mem_fraction_static is unresolved: it needs the GPU's memory (planner)")
    slack = pre_load_gib * (1 - mfs)
    if pre_capture_reserve_gib is not None:
        slack = max(slack, pre_capture_reserve_gib)
    rest = available_gib - slack - mm_reservation_gib(args)
    return PoolBudget(rest_gib=rest, available_gib=available_gib, pre_load_gib=pre_load_gib)
