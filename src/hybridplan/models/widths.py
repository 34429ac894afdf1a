"""The model widths the activation estimate scales with, read from config.json (hidden, MLP/MoE, attention, vocab).

The engine geometry (models.geometry) carries what the pools need; activations also need the layer widths, which
only the config has. `widths_of` is pure over the parsed config; `command_widths` reads the target's and the
draft's config (I/O at the edge, cached per reference).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from hybridplan.errors import BadInput


@dataclass(frozen=True, kw_only=True)
class ModelWidths:
    """Per-token widths of one model's layers (whole model, before tensor parallelism)."""

    hidden: int
    vocab: int
    dense_intermediate: int  # a dense MLP's intermediate size (0: every layer is MoE)
    gated_mlp: bool  # gate + up projections (SiLU-GLU) vs one up projection (relu2)
    moe_intermediate: int  # one routed expert's intermediate size (0: dense model)
    moe_topk: int
    moe_experts: int
    moe_hidden: int  # the routed experts' input width (latent MoE projects hidden down to it)
    moe_shared_intermediate: int
    attn_heads: int
    attn_kv_heads: int
    attn_head_dim: int
    attn_q_mult: int  # 2 when the query projection also carries the output gate
    mla: tuple[int, int, int, int, int] | None  # (q_lora_rank, kv_lora_rank, qk_nope, qk_rope, v_head_dim)
    mtp_layers: int = 0  # in-checkpoint MTP layers (a path-less MTP draft's KV layers)
    aux_layers: int = 0  # a DFlash/DSpark draft: target layers whose hidden states it reads


def _int(cfg: dict[str, Any], *keys: str, default: int = 0) -> int:
    for k in keys:
        v = cfg.get(k)
        if v is not None:
            return int(v)
    return default


def widths_of(root: dict[str, Any]) -> ModelWidths:
    """Widths from a parsed config.json (the text config of a VLM)."""
    cfg = root["text_config"] if isinstance(root.get("text_config"), dict) else root
    hidden = _int(cfg, "hidden_size")
    if hidden <= 0:
        raise BadInput("config.json has no hidden_size: cannot estimate activation memory")
    experts = _int(cfg, "num_experts", "n_routed_experts")
    pattern = str(cfg.get("hybrid_override_pattern") or "")
    dense = (not experts or _int(cfg, "first_k_dense_replace") > 0 or bool(cfg.get("mlp_only_layers"))
             or "-" in pattern)
    heads = _int(cfg, "num_attention_heads", default=1)
    shared = (_int(cfg, "shared_expert_intermediate_size")
              or _int(cfg, "moe_shared_expert_intermediate_size") * _int(cfg, "n_shared_experts", default=1)
              or _int(cfg, "moe_intermediate_size") * _int(cfg, "num_shared_experts")) if experts else 0
    mla = None
    if cfg.get("kv_lora_rank"):
        mla = (_int(cfg, "q_lora_rank"), _int(cfg, "kv_lora_rank"), _int(cfg, "qk_nope_head_dim"),
               _int(cfg, "qk_rope_head_dim"), _int(cfg, "v_head_dim"))
    act = str(cfg.get("mlp_hidden_act") or cfg.get("hidden_act") or "silu")
    dflash: dict[str, Any] = root["dflash_config"] if isinstance(root.get("dflash_config"), dict) else {}
    return ModelWidths(
        hidden=hidden, vocab=_int(cfg, "vocab_size") or _int(root, "vocab_size"),
        dense_intermediate=_int(cfg, "intermediate_size") if dense else 0, gated_mlp=act != "relu2",
        moe_intermediate=_int(cfg, "moe_intermediate_size") if experts else 0,
        moe_topk=_int(cfg, "num_experts_per_tok", "num_experts_per_token") if experts else 0, moe_experts=experts,
        moe_hidden=_int(cfg, "moe_latent_size", "routed_expert_hidden_size", default=hidden) if experts else 0,
        moe_shared_intermediate=shared, attn_heads=heads, attn_kv_heads=_int(cfg, "num_key_value_heads", default=heads),
        attn_head_dim=_int(cfg, "head_dim", default=hidden // max(heads, 1)),
        attn_q_mult=2 if cfg.get("attn_output_gate") else 1, mla=mla,
        mtp_layers=_int(cfg, "mtp_num_hidden_layers", "num_nextn_predict_layers"),
        aux_layers=len(dflash.get("target_layer_ids") or []),
    )


@lru_cache(maxsize=256)
def _widths_for_ref(ref: str) -> ModelWidths:
    from hybridplan.models.loader import resolve_config

    return widths_of(resolve_config(ref).config)


def _widths(ref: str) -> ModelWidths:
    """Cached by ref for local resolution; under a context's resolver (the web's policy and uploads) a ref can name
    different configs in different requests, so it is resolved afresh."""
    from hybridplan.models.loader import active_resolver, resolve_config

    return _widths_for_ref(ref) if active_resolver() is None else widths_of(resolve_config(ref).config)


class _Launch(Protocol):
    """A resolved launch read by field name (the target's model_path and the draft's speculative_draft_model_path)."""

    def __getitem__(self, name: str) -> Any: ...


def command_widths(args: _Launch) -> tuple[ModelWidths, ModelWidths | None]:
    """The target's widths and, with a separate draft checkpoint, the draft's (configs resolved like --model-path)."""
    draft_ref = args["speculative_draft_model_path"]
    return _widths(args["model_path"]), (_widths(draft_ref) if draft_ref else None)
