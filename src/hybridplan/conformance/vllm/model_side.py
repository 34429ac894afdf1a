"""hybridplan's side of the vLLM conformance suite: the plan in the driver's result schema, the parse as the driver
reads it, and the hybridplan rule behind each compared field."""

from __future__ import annotations

from typing import Any

from hybridplan.conformance.compare import Answer
from hybridplan.engine.vllm.engine import for_version as vllm_release
from hybridplan.errors import EngineRefusal

P = vllm_release(None).rules_package  # the modelled releases' rules, as conformance reports name them

# the compared fields of a plan (the parse first: nothing after a parse drift compares)
FIELDS = ("parsed", "attention_backend", "block_size", "mamba_block_size", "mamba_cache_mode",
          "mamba_page_size_padded", "attn_page_bytes", "state_page_bytes", "page_bytes", "num_blocks", "groups",
          "max_model_len", "kv_cache_tokens", "max_concurrency", "conv_shape", "temporal_shape", "state_dtypes",
          "max_num_seqs", "max_num_batched_tokens")

# field -> the hybridplan rule that computes it
RULES: dict[str, str] = {
    "parsed": f"{P}.command.parse_command",
    "attention_backend": f"{P}.mla.select_mla_backend",
    "block_size": f"{P}.planning.hybrid_block_size",
    "mamba_block_size": f"{P}.planning.hybrid_block_size",
    "mamba_cache_mode": f"{P}.planning._cache_mode",
    "mamba_page_size_padded": f"{P}.planning.plan (the state page padded to the attention page)",
    "attn_page_bytes": f"{P}.planning.attn_page_bytes_per_token",
    "state_page_bytes": f"{P}.planning.state_page_bytes",
    "page_bytes": f"{P}.planning.layout",
    "num_blocks": f"{P}.planning.plan (available // bytes per block)",
    "groups": f"{P}.planning._groups / KVLayout.group_plans",
    "max_model_len": f"{P}.planning._auto_fit",
    "kv_cache_tokens": f"{P}.planning.plan (the logged capacity)",
    "max_concurrency": f"{P}.planning.plan (the logged concurrency)",
    "conv_shape": f"{P}.planning.state_shapes",
    "temporal_shape": f"{P}.planning.state_shapes",
    "state_dtypes": f"{P}.planning.state_dtypes",
    "max_num_seqs": f"{P}.planning.batch_defaults",
    "max_num_batched_tokens": f"{P}.planning.batch_defaults",
    "error": "(the refusal)",
}


def non_default(engine: Any, cmd: Any) -> dict[str, Any]:
    """The parsed values that differ from the parser's defaults (what the driver reads off vLLM's namespace)."""
    reg = engine.registry()
    return {k: v for k, v in cmd.values.items() if v != reg.default(k)}


def predict(sid: str, engine: Any, args: Any, geo: Any, memory: int) -> dict[str, Any]:
    """hybridplan's plan in the driver's result schema (a refusal names the rule that refused)."""
    try:
        p = engine.plan(args, geo, memory)
    except EngineRefusal as exc:
        return {"id": sid, "error": {"type": exc.kind, "message": exc.message, "rule": exc.rule}}
    return {"id": sid, "attention_backend": args.attn_backend.name, "max_num_seqs": args.max_num_seqs,
            "max_num_batched_tokens": args.max_num_batched_tokens,
            "block_size": p.block_size, "mamba_block_size": p.mamba_block_size,
            "mamba_cache_mode": p.mamba_cache_mode, "mamba_page_size_padded": p.mamba_page_size_padded,
            "attn_page_bytes": p.attn_page_bytes, "state_page_bytes": p.state_page_bytes, "page_bytes": p.page_bytes,
            "num_blocks": p.num_blocks, "max_model_len": p.max_model_len, "kv_cache_tokens": p.kv_cache_tokens,
            "max_concurrency": repr(p.max_concurrency), "conv_shape": list(p.conv_shape),
            "temporal_shape": list(p.temporal_shape), "state_dtypes": list(p.state_dtypes),
            "groups": [{"kind": g.kind, "layers": g.layers, "block_size": g.block_size,
                        "blocks_per_request": g.blocks_per_request} for g in p.groups]}


def fields(answer: Answer) -> dict[str, Any]:
    """The compared fields an answer holds (a refusal: none but the parse)."""
    return {f: answer[f] for f in FIELDS if f in answer}


def same_refusal(engine: Answer, ours: Answer) -> bool:
    return bool(engine["type"] == ours["type"] and engine["message"] == ours["message"])
