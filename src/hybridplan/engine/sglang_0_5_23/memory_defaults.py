"""Memory-dependent defaults of sglang 0.5.23 (arg_groups/memory_hook.py::handle_gpu_memory_settings)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hybridplan.engine.sglang_0_5_23.resolve import _Resolver

RULE = "arg_groups/memory_hook.py::handle_gpu_memory_settings"


def tier(gpu_mem_mib: int | None, tp: int) -> tuple[int, int]:
    """(chunked_prefill_size, decode cuda-graph max_bs) by GPU memory tier."""
    if gpu_mem_mib is None:
        return 4096, 160
    if gpu_mem_mib < 20 * 1024:
        return 2048, 8
    if gpu_mem_mib < 35 * 1024:
        return 4096, 48 if tp < 4 else 160
    if gpu_mem_mib < 60 * 1024:
        return 4096, 32 if tp < 4 else 160
    if gpu_mem_mib < 160 * 1024:
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


def apply_memory_defaults(r: "_Resolver") -> None:
    """Fill chunked_prefill_size and the decode graph max_bs; mem_fraction_static needs the GPU (planner)."""
    gpu = r.platform.gpu_memory_mib
    chunk, max_bs = tier(gpu, r["tp_size"])
    if r["chunked_prefill_size"] is None:
        if gpu is None:
            r.set_default(f"{RULE} (GPU memory unknown: the engine's own fallback)", chunked_prefill_size=chunk)
        else:
            r.set_default(RULE, chunked_prefill_size=chunk)
    if r["cuda_graph_max_bs_decode"] is None:
        if r.explicit("max_running_requests") and r["max_running_requests"] < max_bs:
            max_bs = r["max_running_requests"]
        r.set_default(RULE, cuda_graph_max_bs_decode=max_bs)
