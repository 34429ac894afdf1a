"""GPU-memory-dependent defaults (arg_groups/memory_hook.py::handle_gpu_memory_settings; server_args.py's
_handle_gpu_memory_settings before 0.5.20), with a release's switches: the 20-35 GiB tier, the unknown-GPU fraction,
the XPU reserve and whether a typed --max-running-requests caps the decode graph.

chunked_prefill_size and the decode graph max_bs by memory tier, the CUDA-graph reserve, and the default
--mem-fraction-static (with the VLM adjustment). They run where the engine runs them: before the radix and
speculative hooks, so only user-typed --max-running-requests / --speculative-num-draft-tokens are seen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hybridplan.engine.sglang.args import EngineArgs, env_bool
from hybridplan.engine.sglang.behaviours import Switches
from hybridplan.engine.sglang.cuda_graph import DISABLED, GraphConfig, resolve_graph_config, typed
from hybridplan.engine.sglang.reserves import activation_tokens, post_capture_kv_sizing_planned

if TYPE_CHECKING:
    from hybridplan.engine.sglang.resolver import Resolver
    from hybridplan.models.geometry import ModelGeometry

RULE = "arg_groups/memory_hook.py::handle_gpu_memory_settings"
VLM_RULE = "arg_groups/memory_hook.py::adjust_mem_fraction_for_vlm"


def tier(gpu_mem_mib: float | None, tp: int, sw: Switches) -> tuple[int, int]:
    """(chunked_prefill_size, decode cuda-graph max_bs) by GPU memory tier."""
    if gpu_mem_mib is None:
        return 4096, 160
    if gpu_mem_mib < 20 * 1024:
        return 2048, 8
    if gpu_mem_mib < 35 * 1024:
        chunk, small_tp, large_tp = sw.mid_tier_chunk_and_graph
        return chunk, small_tp if tp < 4 else large_tp
    if gpu_mem_mib < 60 * 1024:
        return 4096, 32 if tp < 4 else 160
    if gpu_mem_mib < 160 * 1024:
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


def reserve_for_graph_mb(g: GraphConfig, *, pd_mode: str, attn_dp: int, mla: bool, deepep: bool) -> float:
    """memory_hook.py::reserve_for_graph_mb: decode max_bs x 2, the DP-attention padding, prefill buckets x 8 (MLA 1.5 GiB)."""
    reserved = 0.0
    max_bs = g.decode_max_bs or 0
    if pd_mode != "prefill" and g.decode_backend != DISABLED:
        reserved += max_bs * 2
    if attn_dp > 1 and pd_mode != "prefill":
        reserved += max_bs * attn_dp * 3
        if max_bs > 300:
            reserved += max_bs * attn_dp * 1.5
    if pd_mode != "decode" and g.prefill_backend != DISABLED:
        reserved += 1.5 * 1024 if mla else len(g.prefill_bs) * 8
        if g.prefill_backend == "breakable" and deepep:
            reserved += 1024
    return reserved


def vlm_factor(vision_layers: int | None, vision_hidden: int | None) -> float:
    """adjust_mem_fraction_for_vlm (graph-reserve mode): 0.95 x clamp(1 - 0.1 (ViT complexity ratio - 1), 0.8, 1.05).

    The engine reads vision_config.num_hidden_layers / hidden_size with defaults 24 / 1024 (Qwen3-VL-style
    configs name the depth `depth`, so the default 24 applies to them; Kimi-K3's aliases vt_num_hidden_layers).
    """
    layers = vision_layers if vision_layers is not None else 24
    hidden = vision_hidden if vision_hidden is not None else 1024
    ratio = layers * hidden**2 / (24 * 1024**2)
    return 0.95 * max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))


def _decode_max_bs(r: Resolver, gpu: float | None) -> int:
    """The decode graph's max_bs: the flag, the explicit bs list, else the tier (capped by a typed mrr from 0.5.22)."""
    bs_list = r.args.get("cuda_graph_bs_decode")
    if bs_list is not None and bs_list.value:
        return int(max(bs_list.value))
    if r["cuda_graph_max_bs_decode"] is not None:
        return int(r["cuda_graph_max_bs_decode"])
    _, max_bs = tier(gpu, r["tp_size"], r.sw)
    if r.sw.decode_graph_capped_by_mrr and r.explicit("max_running_requests") and r["max_running_requests"] < max_bs:
        max_bs = r["max_running_requests"]
    return max_bs


def _post_capture_planned(r: Resolver, g: GraphConfig) -> bool:
    """overrides.py::post_capture_kv_sizing_planned for a hybrid (mambaish) model."""
    return post_capture_kv_sizing_planned(
        enabled=env_bool(r.env, "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING"),
        device=r.platform.device, dcp=r["dcp_size"], mla=r.geo.kv.kind == "mla",
        blockers=tuple(n for n in ("enable_kv_cache_sharding", "prefill_only_disable_kv_cache", "enable_memory_saver",
                                   "enable_unified_memory") if r.get_bool(n)),
        pd_mode=r["disaggregation_mode"], graph=g, chunked=r["chunked_prefill_size"])


def _default_fraction(r: Resolver, g: GraphConfig, gpu: float | None) -> tuple[float, str]:
    """The mem_fraction_static heuristic (graph-reserve or post-capture mode) and the VLM adjustment."""
    post = r["post_capture_kv_sizing_planned"]
    tp_pp = r["tp_size"] * r["pp_size"] / 8 * 1024
    mode = r["disaggregation_mode"]
    if post:
        reserved = 1536 + tp_pp
        how = f"post-capture mode: 1536 + tp.pp/8 x 1024 = {reserved:.0f} MiB"
    else:
        act = activation_tokens(pd_decode=mode == "decode",
                                running=r["max_running_requests"] or g.decode_max_bs,
                                draft_tokens=r["speculative_num_draft_tokens"], chunked=r["chunked_prefill_size"],
                                max_prefill_tokens=r["max_prefill_tokens"])
        a2a = typed(r, "moe_a2a_backend", "none")
        graph = reserve_for_graph_mb(g, pd_mode=mode, attn_dp=r["attn_dp_size"], mla=r.geo.kv.kind == "mla",
                                     deepep=a2a == "deepep")
        reserved = 512 + act * 1.5 + tp_pp + graph
        if gpu is not None and gpu > 60 * 1024:
            reserved = max(reserved, 10 * 1024)
        if mode != "prefill" and g.decode_backend != DISABLED and a2a == "deepep":  # reserve_for_deepep_a2a_mb
            reserved += 2 * 1024
        if r.platform.device == "xpu":
            reserved += r.sw.xpu_extra_reserve_mib
        how = (f"reserved {reserved:.0f} MiB = max(512 + 1.5 x {act} activation tokens + tp.pp/8 x 1024 + "
               f"{graph:.0f} graph, 10 GiB floor above 60 GiB)")
    if gpu is None:
        return r.sw.unknown_gpu_mem_fraction, f"{RULE} (GPU memory unknown: {r.sw.unknown_gpu_mem_fraction})"
    mfs = round((gpu - reserved) / gpu, 3)
    how = f"{RULE}: round(({gpu:g} - {reserved:.0f}) / {gpu:g}, 3) = {mfs} ({how})"
    vlm = (r["is_multimodal"] and not r["language_only"] and not r["language_model_only"] and mode != "decode")
    if vlm:
        if post:
            mfs = mfs - 8 * 1024 / gpu
            how += f"; {VLM_RULE}: - 8 GiB / gpu_mem"
        elif r.geo.vision is not None:  # any hf_config.vision_config, its attributes defaulting to 24 / 1024
            factor = vlm_factor(r.geo.vision.num_hidden_layers, r.geo.vision.hidden_size)
            mfs = mfs * factor
            how += f"; {VLM_RULE}: x {factor:.5f}"
    return mfs, how


def apply_memory_defaults(r: Resolver) -> None:
    """Fill chunked_prefill_size, the decode graph max_bs, the graph settings and (with a GPU) mem_fraction_static."""
    gpu = r.platform.gpu_memory_mib
    chunk, _ = tier(gpu, r["tp_size"], r.sw)
    if r["chunked_prefill_size"] is None:
        why = RULE if gpu is not None else f"{RULE} (GPU memory unknown: the engine's own fallback)"
        r.set_default(why, chunked_prefill_size=chunk)
    max_bs = _decode_max_bs(r, gpu)
    if r["cuda_graph_max_bs_decode"] is None:
        r.set_default(RULE, cuda_graph_max_bs_decode=max_bs)
    g = resolve_graph_config(r, max_bs)
    r.set("arg_groups/cuda_graph_hook.py::handle_cuda_graph_config", cuda_graph_decode_backend=g.decode_backend,
          cuda_graph_decode_max_bs=g.decode_max_bs)
    r.set(g.prefill_rule, cuda_graph_prefill_backend=g.prefill_backend)
    r.set(RULE, cuda_graph_prefill_max_bs=g.prefill_max_bs, cuda_graph_prefill_bs=g.prefill_bs,
          cuda_graph_prefill_full_max_req=g.prefill_full_max_req)
    r.set("arg_groups/overrides.py::post_capture_kv_sizing_planned",
          post_capture_kv_sizing_planned=_post_capture_planned(r, g))
    if r["mem_fraction_static"] is None and gpu is not None:
        mfs, how = _default_fraction(r, g, gpu)
        r.set_default(how, mem_fraction_static=mfs)


def default_fraction_reserve_mib(args: EngineArgs, geo: ModelGeometry) -> tuple[float, str]:
    """The default-mem-fraction reserve without its 10 GiB floor (_default_fraction's graph-reserve mode, on resolved
    args): 512 + 1.5 MiB per activation token + tp.pp/8 GiB + the graph reserve. Conservative by design."""
    g = GraphConfig(decode_backend=args["cuda_graph_decode_backend"], decode_max_bs=args["cuda_graph_decode_max_bs"],
                    prefill_backend=args["cuda_graph_prefill_backend"], prefill_max_bs=args["cuda_graph_prefill_max_bs"],
                    prefill_bs=args["cuda_graph_prefill_bs"], prefill_rule="")
    mode = args["disaggregation_mode"]
    act = activation_tokens(pd_decode=mode == "decode", running=args["max_running_requests"] or g.decode_max_bs,
                            draft_tokens=args["speculative_num_draft_tokens"], chunked=args["chunked_prefill_size"],
                            max_prefill_tokens=args["max_prefill_tokens"])
    graph = reserve_for_graph_mb(g, pd_mode=mode, attn_dp=args["attn_dp_size"], mla=geo.kv.kind == "mla",
                                 deepep=args.get("moe_a2a_backend") == "deepep")
    tp_pp = args["tp_size"] * args["pp_size"] / 8 * 1024
    total = 512 + 1.5 * act + tp_pp + graph
    return total, (f"512 + 1.5 x {act} activation tokens + {tp_pp:.0f} (tp.pp) + {graph:.0f} graph MiB: the engine's "
                   "default-mem-fraction reserve (arg_groups/memory_hook.py), for reference only")
