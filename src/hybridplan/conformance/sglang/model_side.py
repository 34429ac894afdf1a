"""hybridplan's side of the SGLang conformance suite: the same fields the oracle driver reads from the engine, and
the hybridplan rule that computes each."""

from __future__ import annotations

from hybridplan.conformance.sglang.scenarios import Scenario
from hybridplan.conformance.sglang.schema import OracleError, Result
from hybridplan.engine.api import LaunchCommand, Platform, for_version
from hybridplan.errors import BadInput, EngineRefusal

E = for_version().rules_package  # the modelled release's rules, as conformance reports name them
M = "hybridplan.models"

# field (section.name, or a section) -> the hybridplan rule that computes it
RULES: dict[str, str] = {
    "resolved.mamba_radix_cache_strategy": f"{E}.resolve._radix",
    "resolved.disable_overlap_schedule": f"{E}.resolve._radix / _pp_overlap",
    "resolved.disable_radix_cache": f"{E}.resolve (argparse)",
    "resolved.speculative_algorithm": f"{E}.speculative.resolve_speculative",
    "resolved.speculative_num_draft_tokens": f"{E}.speculative.resolve_speculative",
    "resolved.speculative_num_steps": f"{E}.speculative.resolve_speculative",
    "resolved.speculative_eagle_topk": f"{E}.speculative.resolve_speculative",
    "resolved.max_running_requests": f"{E}.speculative._default_mrr",
    "resolved.page_size": f"{E}.resolve._page_size",
    "resolved.mamba_ssm_dtype": f"{E}.resolve._linear_attn",
    "resolved.kv_cache_dtype": f"{E}.resolve (argparse)",
    "resolved.chunked_prefill_size": f"{E}.memory_defaults.apply_memory_defaults",
    "resolved.max_mamba_cache_size": f"{E}.resolve (argparse)",
    "resolved.mamba_full_memory_ratio": f"{E}.resolve (argparse)",
    "resolved.mem_fraction_static": f"{E}.memory_defaults.apply_memory_defaults",
    "resolved": f"{E}.resolve._parallel",
    "geometry.conv": f"{M}.geometry.<Mixer>.shape",
    "geometry.temporal": f"{M}.geometry.<Mixer>.shape",
    "geometry.linear_layer_ids": f"{M}.families (layer pattern)",
    "geometry.full_attention_layer_ids": f"{M}.families (layer pattern)",
    "geometry.mamba_cache_per_req": f"{M}.geometry.ModelGeometry.state_bytes_per_slot",
    "geometry.replayssm_ring_bytes_per_req": f"{M}.geometry.ModelGeometry.replayssm_ring_bytes",
    "geometry.conv_dtype": f"{E}.resolve._state_dtypes",
    "geometry.ssm_dtype": f"{E}.resolve._state_dtypes",
    "geometry.context_len": f"{M}.config_json.context_length",
    "geometry.dtype": "hybridplan.dtypes.model_dtype",
    "geometry.num_nextn_predict_layers": f"{M}.families (num_nextn_predict_layers)",
    "geometry.is_multimodal": f"{E}.resolve._model",
    "geometry.quantization": f"{M}.quant.quant_info (engine_method)",
    "kv.kv_torch_dtype": f"{E}.kv_dtype.target_kv_dtype",
    "kv.target_cells": f"{E}.sizing.kv_cell (target)",
    "kv.cells": f"{E}.sizing.kv_cell (draft KV)",
    "kv.post_capture_kv_active": f"{E}.budget.pool_budget (post-capture slack floor)",
    "sizing.S": f"{E}.sizing.mamba_ratio",
    "sizing.K": f"{E}.sizing.handle_max_mamba_cache",
    "sizing.branch": f"{E}.sizing.handle_max_mamba_cache",
    "sizing.kv_budget_bytes": f"{E}.sizing.handle_max_mamba_cache / budget.pool_budget",
    "sizing.max_total_num_tokens": f"{E}.sizing.tokens_from_budget",
    "sizing.max_running_requests": f"{E}.sizing.resolve_max_num_reqs",
    "error": "(the refusal)",
}

# Resolved engine fields compared one to one (the oracle's RESOLVED_FIELDS that hybridplan holds).
RESOLVED = (
    "mamba_radix_cache_strategy", "disable_overlap_schedule", "disable_radix_cache", "speculative_algorithm",
    "speculative_num_draft_tokens", "speculative_num_steps", "speculative_eagle_topk", "max_running_requests",
    "page_size", "mamba_ssm_dtype", "kv_cache_dtype", "chunked_prefill_size", "max_mamba_cache_size",
    "mamba_full_memory_ratio", "mem_fraction_static", "attn_tp_size", "attn_dp_size", "pp_size",
)


def _refusal(stage: str, exc: EngineRefusal) -> OracleError:
    return {"stage": stage, "type": exc.kind, "message": exc.message, "rule": exc.rule}


def predict(sc: Scenario, version: str | None = None) -> Result:
    """What hybridplan's model of release `version` (default the newest) says the engine holds and allocates for this
    scenario (the driver's result schema)."""
    from hybridplan.engine.api import load

    out: Result = {"id": sc.id}
    cmd = LaunchCommand(env=sc.env, argv=sc.argv)
    try:
        loaded = load(cmd, platform=Platform(device="cuda", sm=90, gpu_memory_mib=sc.gpu_mib), version=version)
    except BadInput as exc:
        out["error"] = {"stage": "parse", "type": "SystemExit", "message": exc.message}
        return out
    except EngineRefusal as exc:
        out["error"] = _refusal("resolve", exc)
        return out
    args, geo, draft = loaded.args, loaded.geometry, loaded.draft
    engine = for_version(loaded.version)
    out["resolved"] = {f: args.get(f) for f in RESOLVED}
    try:
        tp = engine.state_tp(args, geo)
        shape = geo.state_shape(tp)
        ssm, conv = args["mamba_ssm_dtype_resolved"], args["mamba_conv_dtype"]
        out["geometry"] = {
            "conv": [list(c) for c in shape.conv], "temporal": list(shape.temporal),
            "linear_layer_ids": list(geo.linear_layer_ids),
            "full_attention_layer_ids": list(geo.full_attention_layer_ids),
            "mamba_cache_per_req": geo.state_bytes_per_slot(tp, ssm, conv),
            "replayssm_ring_bytes_per_req": engine.replayssm_ring_bytes(args, geo, sc.record_len),
            "conv_dtype": conv, "ssm_dtype": ssm, "context_len": args["context_length"], "dtype": args["model_dtype"],
            "num_nextn_predict_layers": geo.num_nextn_predict_layers, "is_multimodal": args["is_multimodal"],
            "quantization": geo.quantization,
        }
    except EngineRefusal as exc:
        out["error"] = _refusal("model", exc)
        return out
    try:
        cells = [engine.kv_cell(args, geo, draft, stage=s) for s in range(args["pp_size"])]
        out["kv"] = {"kv_torch_dtype": args["kv_cache_torch_dtype"], "target_cells": [c.target for c in cells],
                     "cells": [c.total for c in cells],
                     "post_capture_kv_active": bool(args["post_capture_kv_sizing_planned"])}
    except EngineRefusal as exc:
        out["error"] = _refusal("kv", exc)
        return out
    if sc.available_gib is None or sc.pre_load_gib is None:  # no profile: no sizing (the two come together)
        try:
            engine.req_pool_guards(args, geo)
        except EngineRefusal as exc:
            out["error"] = _refusal("pool", exc)
        return out
    try:
        S = engine.slots_per_request(args)
    except EngineRefusal as exc:
        out["error"] = _refusal("sizing", exc)
        out["sizing"] = {"S": None}
        return out
    try:
        reserve = engine.pre_capture_reserve_gib(args, sc.gpu_mib)
        s = engine.size_pools(engine.pool_budget(sc.available_gib, sc.pre_load_gib, args, reserve), args, geo, draft)
    except EngineRefusal as exc:
        out["error"] = _refusal("sizing", exc)
        out["sizing"] = {"S": S}
        return out
    out["sizing"] = {"S": S, "K": s.max_mamba_cache_size, "branch": s.state.branch,
                     "kv_budget_bytes": s.kv_budget_bytes, "max_total_num_tokens": s.max_total_num_tokens,
                     "max_running_requests": s.max_running_requests}
    return out
