"""CUDA-graph settings of sglang 0.5.23 that the memory heuristics read (arg_groups/cuda_graph_hook.py).

Resolves, from the flags, which backend each phase captures with and the prefill graph's batch-size list;
`memory_defaults` turns them into the graph reserve of the default --mem-fraction-static.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hybridplan.errors import BadInput

if TYPE_CHECKING:
    from hybridplan.engine.sglang.resolver import Resolver

HOOK = "arg_groups/cuda_graph_hook.py"
FULL, BREAKABLE, DISABLED = "full", "breakable", "disabled"
PP_PREFILL_MAX_TOKENS = 8192  # memory_hook.py::_DEFAULT_PP_PREFILL_CUDA_GRAPH_MAX_TOKENS (0.5.19 on)
MLA_PREFILL_MAX_TOKENS = 8192  # memory_hook.py::handle_gpu_memory_settings: MLA capture cap (0.5.23; 2048 flat before)
A2A_BCG_OK = ("none", "deepep", "megamoe", "flashinfer")


@dataclass(frozen=True, kw_only=True)
class GraphConfig:
    """The resolved per-phase graph settings the memory heuristic reads."""

    decode_backend: str
    decode_max_bs: int | None
    prefill_backend: str
    prefill_max_bs: int | None
    prefill_bs: tuple[int, ...]
    prefill_rule: str  # why the prefill backend is what it is
    prefill_full_max_req: int | None = None  # --cuda-graph-config prefill.full_prefill_max_req (Full's request slots)


def prefill_batch_sizes(max_bs: int) -> tuple[int, ...]:
    """generate_prefill_cuda_graph_batch_sizes: token buckets 4..32/4, 48..256/16, 288..512/32, 576..1024/64,
    1280..4096/256, then every 512 up to max_bs."""
    sizes = (list(range(4, 33, 4)) + list(range(48, 257, 16)) + list(range(288, 513, 32))
             + list(range(576, 1025, 64)) + list(range(1280, 4097, 256)) + list(range(4608, max_bs + 1, 512)))
    return tuple(s for s in sizes if s <= max_bs)


def typed(r: Resolver, name: str, default: Any = None) -> Any:
    """A flag's typed value for flags outside SIZING_FIELDS (absent: `default`, the registry default)."""
    arg = r.args.get(name)
    return default if arg is None else arg.value


def _json_config(r: Resolver) -> dict[str, Any]:
    """--cuda-graph-config JSON (model_executor/cuda_graph_config.py::parse_cuda_graph_config_arg), per phase."""
    raw = typed(r, "cuda_graph_config")
    if raw is None:
        return {}
    try:
        data = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as exc:
        raise BadInput(f"argument --cuda-graph-config: invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise BadInput("argument --cuda-graph-config: expected a JSON object of phase -> settings")
    return {k: v for k, v in data.items() if k in ("decode", "prefill") and isinstance(v, dict)}


def _breakable_blocker(r: Resolver) -> str | None:
    """disable_breakable_cudagraph_if_incompatible: the first rule that turns the default prefill BCG off."""
    geo = r.geo
    kda = r.sw.kda_breakable_prefill_graph  # 0.5.20 on; GLM-5.3 Flash (Glm5Next) exempt from 0.5.22
    if geo.is_kda and (kda == "disabled" or kda == "disabled_but_glm5_next"
                       and geo.architecture != "Glm5NextForConditionalGeneration"):
        return "KDA hybrid linear attention"
    if r["attn_cp_size"] > 1:
        return "attention context parallel (no prefill-CP BCG modelled)"
    if r["dcp_size"] > 1:
        return "decode context parallel (dcp_size > 1)"
    if r.get_bool("enable_two_batch_overlap"):
        return "two-batch overlap"
    a2a = typed(r, "moe_a2a_backend", "none")
    if a2a not in A2A_BCG_OK:
        return "unvalidated a2a backend"
    if r["is_multimodal"] and geo.architecture not in r.sw.multimodal_breakable_graph_archs:
        return "multimodal model"
    return None


def resolve_graph_config(r: Resolver, decode_max_bs: int | None) -> GraphConfig:
    """handle_cuda_graph_config (parse, compatibility cascade, PD roles) and the prefill max_bs / bs defaults."""
    js = _json_config(r)
    decode, prefill = js.get("decode", {}), js.get("prefill", {})
    d_backend, d_locked = FULL, False
    p_backend, p_locked = (BREAKABLE if r.platform.device == "cuda" else DISABLED), False
    rule = f"model_executor/cuda_graph_config.py::default_prefill_backend ({r.platform.device})"
    if r.get_bool("disable_cuda_graph"):
        d_backend = p_backend = DISABLED
        d_locked = p_locked = True
        rule = "--disable-cuda-graph"
    if r.get_bool("disable_prefill_cuda_graph"):
        p_backend, p_locked, rule = DISABLED, True, "--disable-prefill-cuda-graph"
    if r.get_bool("disable_decode_cuda_graph"):
        d_backend, d_locked = DISABLED, True
    if r["cuda_graph_backend_decode"] is not None:
        d_backend, d_locked = r["cuda_graph_backend_decode"], True
    if r["cuda_graph_backend_prefill"] is not None:
        p_backend, p_locked, rule = r["cuda_graph_backend_prefill"], True, "--cuda-graph-backend-prefill"
    if "backend" in decode:
        d_backend, d_locked = decode["backend"], True
    if "backend" in prefill:
        p_backend, p_locked, rule = prefill["backend"], True, "--cuda-graph-config"
    if not p_locked:
        if r["pp_size"] > 1 and p_backend == BREAKABLE and r.sw.pp_disables_breakable_prefill_graph:  # 0.5.19 on
            p_backend, rule = DISABLED, f"{HOOK}::apply_cuda_graph_compatibility (pipeline parallelism)"
        elif p_backend == BREAKABLE:
            blocker = _breakable_blocker(r)
            if blocker is not None:
                p_backend, rule = DISABLED, f"{HOOK}::disable_breakable_cudagraph_if_incompatible ({blocker})"
    mode = r["disaggregation_mode"]
    if mode == "prefill" and not d_locked:
        d_backend = DISABLED
    if mode == "decode" and not p_locked:
        p_backend, rule = DISABLED, f"{HOOK}::apply_cuda_graph_disaggregation_roles (PD decode)"
    if "max_bs" in decode:
        decode_max_bs = decode["max_bs"]
    if decode.get("bs"):
        decode_max_bs = max(decode["bs"])
    return GraphConfig(decode_backend=d_backend, decode_max_bs=decode_max_bs, prefill_backend=p_backend,
                       prefill_rule=rule, prefill_full_max_req=prefill.get("full_prefill_max_req"),
                       **_prefill_buckets(r, prefill, p_backend))


def _prefill_buckets(r: Resolver, prefill: dict[str, Any], backend: str) -> dict[str, Any]:
    """memory_hook.py::handle_gpu_memory_settings: prefill max_bs (chunk, MLA cap, PP cap, max_total_tokens, llama-2)."""
    explicit_bs = prefill.get("bs") or typed(r, "cuda_graph_bs_prefill")
    max_bs = prefill.get("max_bs", typed(r, "cuda_graph_max_bs_prefill"))
    if max_bs is None:
        chunk = r["chunked_prefill_size"]
        if r.geo.kv.kind != "mla":
            max_bs = chunk
        elif r.sw.mla_prefill_graph_max_bs == "chunk_capped_8192":
            max_bs = min(MLA_PREFILL_MAX_TOKENS, chunk)
        else:
            max_bs = 2048
        if (r["pp_size"] > 1 and backend == BREAKABLE and not explicit_bs and max_bs > PP_PREFILL_MAX_TOKENS
                and r.sw.pp_disables_breakable_prefill_graph):
            max_bs = PP_PREFILL_MAX_TOKENS
        if r["max_total_tokens"] is not None:
            max_bs = min(max_bs, r["max_total_tokens"])
        if "llama-2" in str(r["model_path"]).lower():
            max_bs = min(max_bs, 4096)
    bs = tuple(int(b) for b in explicit_bs) if explicit_bs else prefill_batch_sizes(max_bs)
    return {"prefill_max_bs": max_bs, "prefill_bs": bs}
