"""Post-capture KV sizing gate and the pre-capture activation reserve of sglang 0.5.23.

Off by default: only `SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1` turns it on; for hybrid models the slack then
becomes max(P (1 - mfs), reserve) (mem_cache/kv_cache_configurator.py::_profile_available_bytes).
"""

from __future__ import annotations

from hybridplan.engine.sglang.args import EngineArgs
from hybridplan.engine.sglang.cuda_graph import DISABLED, GraphConfig

RULE = "runtime_context.py::pre_capture_activation_reserve_mb"


def activation_tokens(*, pd_decode: bool, running: int | None, draft_tokens: int | None, chunked: int,
                      max_prefill_tokens: int) -> int:
    """Tokens the activation working set scales with (handle_gpu_memory_settings and
    runtime_context.py::pre_capture_activation_reserve_mb use the same rule)."""
    if pd_decode:
        return max((running or 1) * (draft_tokens or 1), 2048)
    if chunked > 0:
        return max(chunked, 2048)
    return max(max_prefill_tokens, 2048)


def post_capture_kv_sizing_planned(*, enabled: bool, device: str, dcp: int, mla: bool, blockers: tuple[str, ...],
                                   pd_mode: str, graph: GraphConfig, chunked: int) -> bool:
    """arg_groups/overrides.py::post_capture_kv_sizing_planned, for a hybrid (mambaish) model.

    `blockers` are the set flags that rule it out (KV sharding, prefill-only, memory saver, and unified memory,
    which for a mambaish model always disables it).
    """
    if blockers or not enabled or device != "cuda" or dcp != 1 or mla:
        return False
    if pd_mode != "prefill" and graph.decode_backend == DISABLED:
        return False
    if pd_mode != "decode":
        # the largest prefill buffer (chunked_prefill_size) must be a captured bucket
        if graph.prefill_backend == DISABLED or chunked <= 0 or chunked > max(graph.prefill_bs or (0,)):
            return False
    return True


def pre_capture_activation_reserve_mb(args: EngineArgs, gpu_mem_mib: float | None) -> float:
    """512 + 1.5 x activation tokens + tp.pp/8 x 1024 MiB, floored at 10 GiB on cards above 60 GiB."""
    act = activation_tokens(pd_decode=args["disaggregation_mode"] == "decode",
                            running=args["max_running_requests"] or args["cuda_graph_decode_max_bs"],
                            draft_tokens=args["speculative_num_draft_tokens"], chunked=args["chunked_prefill_size"],
                            max_prefill_tokens=args["max_prefill_tokens"])
    reserved: float = 512 + act * 1.5 + args["tp_size"] * args["pp_size"] / 8 * 1024
    if gpu_mem_mib is not None and gpu_mem_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return reserved


def capped_full_prefill_role(args: EngineArgs) -> bool:
    """mem_cache/kv_cache_configurator.py::_profile_available_bytes (0.5.22 on): a PD prefill server on the Full
    prefill graph, with --max-mamba-cache-size, whose --prefill-max-requests fits the graph's request slots."""
    cap, slots = args.get("prefill_max_requests"), args.get("cuda_graph_prefill_full_max_req")
    return (args.switches.post_capture_exempts_capped_full_prefill and args["disaggregation_mode"] == "prefill"
            and args.get("cuda_graph_prefill_backend") == "full" and args["max_mamba_cache_size"] is not None
            and cap is not None and slots is not None and cap <= slots)


def pre_capture_reserve_gib(args: EngineArgs, gpu_mem_mib: float | None) -> float | None:
    """The slack floor _profile_available_bytes applies to a hybrid model when post-capture sizing is active, else
    None (also for the capped full-prefill role, which every prefill batch fits a captured bucket)."""
    if not args.get("post_capture_kv_sizing_planned", False) or capped_full_prefill_role(args):
        return None
    return pre_capture_activation_reserve_mb(args, gpu_mem_mib) / 1024
