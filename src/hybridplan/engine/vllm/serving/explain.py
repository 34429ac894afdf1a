"""`explain --engine vllm`: what vLLM will do with the KV memory it has for a hybrid model, and why (the JSON shape).

The numbers come from the engine API (`engine.for_version(v)`); this module only loads the geometry and lays
the plan out with each value's provenance and the boot-log lines vLLM prints for it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hybridplan.engine.vllm.planning import KVPlan
from hybridplan.engine.vllm.serving.memory import host_growth
from hybridplan.engine.vllm.serving.verdict import Memory, confidence, startup
from hybridplan.errors import EngineRefusal

if TYPE_CHECKING:
    from hybridplan.evidence import EvidenceSource
    from hybridplan.engine.vllm.engine import VllmEngine
    from hybridplan.engine.vllm.planning import VllmArgs
    from hybridplan.engine.vllm.command import VllmCommand
    from hybridplan.models.geometry import ModelGeometry
    from hybridplan.engine.vllm.serving.launch import Card



def explain_vllm(text: str, *, version: str | None, kv_memory_gib: float | None,
                 gpu: str | None = None, others_gib: float | None = None,
                 gpu_memory_gib: float | None = None, evidence: EvidenceSource | None = None) -> dict[str, Any]:
    """The plan for a vLLM launch (`vllm serve ...`, the api_server module, or a `non-default args:` line) on a
    catalog card (its compute capability picks the GDN prefill kernel, whose align-mode checkpoints change the block
    size; its memory the batch defaults; none: an sm90 card). With the logged `Available KV cache memory` (GiB) the
    pool is sized from it; else with a catalog card from the card alone (engine/vllm/serving/memory.py: the memory timeline
    of gpu_worker.py::determine_available_memory, each term sourced); with neither the block size, pages, groups and
    blocks per request still are (the sizing fields null). `gpu_memory_gib` overrides the card's memory or, alone,
    names a card known only by its memory (estimated as a catalog card is). `evidence`: the measured launches on a
    card, which the verdict's confidence on a catalog card names (a card known only by its memory has none to
    compare). BadInput / EngineRefusal propagate to the guard."""
    from hybridplan.engine.vllm.engine import for_version
    from hybridplan.errors import BadInput
    from hybridplan.models.loader import load_model
    from hybridplan.engine.vllm.serving.launch import card, on_card, resolve_on

    engine = for_version(version)
    cmd = engine.parse_command(text)
    model = cmd.values.get("model")
    if not model:
        raise BadInput("the vLLM command names no model (`vllm serve MODEL` or --model)")
    geo = load_model(str(model))
    c = card(gpu, memory_gib=gpu_memory_gib)
    args = resolve_on(engine, cmd, geo, c)
    lay = engine.layout(args, geo)
    head = _head(engine, c, gpu, geo, str(model), cmd, args)
    if gpu_memory_gib is not None:
        head["platform"]["gpu_memory_gib"] = gpu_memory_gib
    timeline = None
    card_gpu = on_card(gpu, gpu_memory_gib)
    if kv_memory_gib is None and card_gpu is not None:
        from hybridplan.engine.vllm.serving.memory import from_card

        quant = cmd.values.get("quantization")
        timeline = from_card(args, card_gpu, None if quant is None else str(quant))
    if kv_memory_gib is None and timeline is None:
        return head | _layout(lay, args, args.max_model_len) | {
            "available_kv_memory_bytes": None, "memory": None, "num_blocks": None, "kv_cache_tokens": None,
            "max_concurrency": None, "predicted_lines": _block_lines(lay, args),
            "notes": ["--kv-memory-gib (the boot log's 'Available KV cache memory') or --gpu (the card alone) sizes "
                      "the pool"]}
    memory = int(timeline.available.value) if timeline is not None else int((kv_memory_gib or 0) * 2**30)
    try:
        plan: KVPlan | EngineRefusal = engine.plan(args, geo, memory)
    except EngineRefusal as exc:
        plan = exc
    unified = card_gpu is not None and card_gpu.unified
    sized = Memory(available=memory, timeline=timeline, measured=timeline is None, unified=unified,
                   others=int((others_gib or 0) * 2**30), host_growth=host_growth() if unified else None,
                   generic=timeline is not None and card_gpu is not None and card_gpu.generic)
    verdict, checks = startup(args, sized, plan)
    launches = None  # the launch as evidence.py compares it, and the measured launches on its card
    if card_gpu is not None and not card_gpu.generic and evidence is not None:
        from hybridplan.engine.vllm.serving.evidence import probe

        launches = probe(cmd, args, card_gpu, engine.version), evidence(engine.name, card_gpu, engine.version)
    verdict = replace(verdict, confidence=confidence(sized, launches))
    notes = [] if timeline is None else [
        "available KV memory estimated from the card alone (memory.timeline); a boot log's 'Available KV cache "
        "memory' (--kv-memory-gib) replaces the estimate"]
    if timeline is not None and card_gpu is not None and card_gpu.unified:
        notes.append(f"{card_gpu.name} shares its memory with the host: vLLM refuses to start when less than the "
                     "requested share is free at startup (v1/worker/utils.py::request_memory), and what the host "
                     "holds is not in this estimate; what the host takes during startup vLLM takes from the KV "
                     "memory, so the estimate is an upper bound (the verdict holds it to the host growth public "
                     "boots there measured: data/vllm_memory.yaml unified_host_growth)")
    out = head | _layout(lay, args, args.max_model_len if isinstance(plan, EngineRefusal) else plan.max_model_len) | {
        "available_kv_memory_bytes": memory,
        "memory": None if timeline is None else {
            "source": "card", "available_kv_gib": round(memory / 2**30, 2), "timeline": timeline.as_dict()},
    }
    if isinstance(plan, EngineRefusal):
        return out | {"num_blocks": None, "kv_cache_tokens": None, "max_concurrency": None,
                      "predicted_lines": _block_lines(lay, args), "notes": notes, "verdict": verdict.as_dict(),
                      "checks": [c.as_dict() for c in checks], "error": plan.as_dict()}
    out |= {
        "num_blocks": plan.num_blocks,
        "kv_cache_tokens": plan.kv_cache_tokens, "max_concurrency": plan.max_concurrency,
        "predicted_lines": _block_lines(lay, args) + [
            f"GPU KV cache size: {plan.kv_cache_tokens:,} tokens",
            f"Maximum concurrency for {plan.max_model_len:,} tokens per request: {plan.max_concurrency:.2f}x"],
        "notes": notes, "verdict": verdict.as_dict(), "checks": [c.as_dict() for c in checks],
    }
    if not verdict.serves and verdict.message is not None:
        out["error"] = EngineRefusal(verdict.message, rule=verdict.rule or "").as_dict()
    return out


def _head(engine: "VllmEngine", c: "Card", gpu: str | None, geo: "ModelGeometry", model: str,
          cmd: "VllmCommand", args: "VllmArgs") -> dict[str, Any]:
    """The engine, card, model, launch and resolved arguments."""
    return {
        "engine": {"name": "vllm", "version": engine.version, "rules": engine.rules_package},
        "platform": {"gpu": gpu, "sm": c.sm, "cuda_runtime_major": c.cuda_runtime_major,
                     "gdn_prefill_checkpoints": args.gdn_prefill_checkpoints,
                     "attention_backend": args.attn_backend.name},
        "model": {"ref": model, "family": geo.family, "architecture": geo.architecture,
                  "state_layers": len(geo.linear_layer_ids), "attention_layers": len(geo.full_attention_layer_ids)},
        "command": {"source": cmd.source, "explicit": cmd.values},
        "resolved": {
            "tensor_parallel_size": args.tensor_parallel_size, "model_dtype": args.model_dtype,
            "kv_cache_dtype": args.kv_cache_dtype, "enable_prefix_caching": args.enable_prefix_caching,
            "mamba_cache_mode": args.mamba_cache_mode, "mamba_cache_dtype": args.mamba_cache_dtype,
            "mamba_ssm_cache_dtype": args.mamba_ssm_cache_dtype, "block_size_requested": args.block_size,
            "max_model_len_requested": -1 if args.auto_fit else args.max_model_len,
            "max_num_seqs": args.max_num_seqs, "max_num_batched_tokens": args.max_num_batched_tokens,
            "gpu_memory_utilization": args.gpu_memory_utilization, "notes": list(args.notes),
        },
        "provenance": engine.provenance(),
    }


def _layout(lay: Any, args: Any, length: int) -> dict[str, Any]:
    """Block size, pages before and after unification, groups, and what a request of `length` tokens takes."""
    groups = lay.group_plans(length)
    padded = lay.page_bytes if lay.page_bytes != lay.state_page_bytes else None
    return {
        "block_size": lay.block_size,
        "mamba_block_size": lay.mamba_block_size,
        "state": {"conv_shape": list(lay.conv_shape), "temporal_shape": list(lay.temporal_shape),
                  "dtypes": list(lay.state_dtypes)},
        "block_size_before_alignment": lay.requested_block_size,
        "pages": {"attention_before_unification": lay.requested_block_size * lay.attn_page_bytes_per_token,
                  "attention_after_unification": lay.page_bytes, "state_unpadded": lay.state_page_bytes,
                  "unified": lay.page_bytes, "mamba_page_size_padded": padded,
                  "state_padding_pct": round(100 * (lay.page_bytes - lay.state_page_bytes) / lay.state_page_bytes, 2)},
        "groups": [{"kind": g.kind, "layers": g.layers, "block_size": g.block_size,
                    "blocks_per_request": g.blocks_per_request} for g in groups],
        "bytes_per_block": lay.bytes_per_block,
        "blocks_per_request": sum(g.blocks_per_request for g in groups),
        "state_pages_per_request": sum(g.blocks_per_request for g in groups if g.kind == "mamba"),
        "max_model_len": length,
    }


def _block_lines(lay: Any, args: Any) -> list[str]:
    """The block-size lines vLLM prints (platforms/interface.py::Platform._align_hybrid_block_size)."""
    lines = []
    if lay.block_size > lay.requested_block_size:
        lines.append(f"Setting attention block size to {lay.block_size} tokens to ensure that attention page size "
                     "is >= mamba page size.")
    if lay.page_bytes != lay.state_page_bytes:
        pct = 100 * (lay.page_bytes - lay.state_page_bytes) / lay.state_page_bytes
        lines.append(f"Padding mamba page size by {pct:.2f}% to ensure that mamba page size and attention page size "
                     "are exactly equal.")
    return lines
