"""Estimate a checkpoint's tensors from its config.json when no headers are at hand (labelled `estimate`).

One module list per family, in the checkpoint's own (Hugging Face) module names so a per-layer quantization
list can be matched; each module's bytes come from the quantization policy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from hybridplan.errors import BadInput
from hybridplan.provenance import Source
from hybridplan.weights.inventory import Inventory, Piece, placement
from hybridplan.weights.quant import QuantPolicy, policy_key, scheme_bytes


@dataclass(frozen=True)
class Module:
    """One weight: (rows x cols) and its kind (linear | expert | router | lm_head | embed | param | param32 | vision)."""

    name: str
    rows: int
    cols: int = 1
    kind: str = "linear"
    count: int = 1  # identical copies (routed experts)


def _get(cfg: dict[str, Any], key: str, default: Any = None) -> Any:
    value = cfg.get(key)
    return default if value is None else value


# ---------------------------------------------------------------------------------------------- shared blocks


def _mlp(p: str, hidden: int, inter: int, gated: bool = True) -> list[Module]:
    mods = [Module(f"{p}.up_proj", inter, hidden), Module(f"{p}.down_proj", hidden, inter)]
    if gated:
        mods.insert(0, Module(f"{p}.gate_proj", inter, hidden))
    return mods


def _experts(p: str, n: int, hidden: int, inter: int, gated: bool = True) -> list[Module]:
    """n routed experts, each an MLP (one Module per projection, `count` = n)."""
    return [Module(f"{p}.experts.{m.name.rsplit('.', 1)[1]}", m.rows, m.cols, "expert", n)
            for m in _mlp(p, hidden, inter, gated)]


def _gqa(p: str, hidden: int, heads: int, kv: int, hd: int, q_mult: int = 1) -> list[Module]:
    return [Module(f"{p}.q_proj", heads * hd * q_mult, hidden), Module(f"{p}.k_proj", kv * hd, hidden),
            Module(f"{p}.v_proj", kv * hd, hidden), Module(f"{p}.o_proj", hidden, heads * hd)]


def _ends(prefix: str, cfg: dict[str, Any], hidden: int, *, embed: str, head: str = "lm_head") -> list[Module]:
    vocab = int(cfg["vocab_size"])
    mods = [Module(embed, vocab, hidden, "embed"), Module(f"{prefix}norm.weight", hidden, 1, "param")]
    if not cfg.get("tie_word_embeddings", False):
        mods.append(Module(head, vocab, hidden, "lm_head"))
    return mods


# ---------------------------------------------------------------------------------------------- families


def _gdn(root: dict[str, Any], cfg: dict[str, Any], full: set[int]) -> list[Module]:
    """Qwen3-Next / Qwen3.5: gated attention every `full_attention_interval`, Gated DeltaNet elsewhere, dense or MoE MLP."""
    nested = isinstance(root.get("text_config"), dict)
    pre = "model.language_model." if nested else "model."
    H, n = int(cfg["hidden_size"]), int(cfg["num_hidden_layers"])
    heads, kv = int(cfg["num_attention_heads"]), int(_get(cfg, "num_key_value_heads", 2))
    hd = int(_get(cfg, "head_dim", 256))
    gate = 2 if cfg.get("attn_output_gate", True) else 1
    nk, nv = int(_get(cfg, "linear_num_key_heads", 16)), int(_get(cfg, "linear_num_value_heads", 32))
    dk, dv = int(_get(cfg, "linear_key_head_dim", 128)), int(_get(cfg, "linear_value_head_dim", 128))
    kernel = int(_get(cfg, "linear_conv_kernel_dim", 4))
    key_dim, value_dim = nk * dk, nv * dv
    split = cfg.get("model_type", "").startswith("qwen3_5") or root.get("model_type", "").startswith("qwen3_5")
    experts = int(_get(cfg, "num_experts", 0))
    sparse_step = int(_get(cfg, "decoder_sparse_step", 1))
    mlp_only = set(_get(cfg, "mlp_only_layers", []))

    def mlp(p: str, i: int | None) -> list[Module]:
        if experts and (i is None or (i not in mlp_only and (i + 1) % sparse_step == 0)):
            mi, si = int(cfg["moe_intermediate_size"]), int(_get(cfg, "shared_expert_intermediate_size", 0))
            mods = _experts(p, experts, H, mi) + [Module(f"{p}.gate", experts, H, "router")]
            if si:
                mods += _mlp(f"{p}.shared_expert", H, si) + [Module(f"{p}.shared_expert_gate", 1, H, "router")]
            return mods
        return _mlp(p, H, int(cfg["intermediate_size"]))

    def attn(p: str) -> list[Module]:
        return _gqa(f"{p}.self_attn", H, heads, kv, hd, gate) + [
            Module(f"{p}.self_attn.q_norm.weight", hd, 1, "param"), Module(f"{p}.self_attn.k_norm.weight", hd, 1, "param")]

    def linear(p: str) -> list[Module]:
        la = f"{p}.linear_attn"
        if split:
            proj = [Module(f"{la}.in_proj_qkv", 2 * key_dim + value_dim, H), Module(f"{la}.in_proj_z", value_dim, H),
                    Module(f"{la}.in_proj_b", nv, H, "router"), Module(f"{la}.in_proj_a", nv, H, "router")]
        else:
            proj = [Module(f"{la}.in_proj_qkvz", 2 * key_dim + 2 * value_dim, H),
                    Module(f"{la}.in_proj_ba", 2 * nv, H, "router")]
        return proj + [Module(f"{la}.conv1d.weight", 2 * key_dim + value_dim, kernel, "param"),
                       Module(f"{la}.dt_bias", nv, 1, "param"), Module(f"{la}.A_log", nv, 1, "param32"),
                       Module(f"{la}.norm.weight", dv, 1, "param"), Module(f"{la}.out_proj", H, value_dim)]

    def norms(p: str) -> list[Module]:
        return [Module(f"{p}.input_layernorm.weight", H, 1, "param"),
                Module(f"{p}.post_attention_layernorm.weight", H, 1, "param")]

    mods: list[Module] = []
    for i in range(n):
        p = f"{pre}layers.{i}"
        mods += (attn(p) if i in full else linear(p)) + mlp(f"{p}.mlp", i) + norms(p)
    mods += _ends(pre, cfg, H, embed=f"{pre}embed_tokens")
    for j in range(int(_get(cfg, "mtp_num_hidden_layers", _get(cfg, "num_nextn_predict_layers", 0)))):
        p = f"mtp.layers.{j}"
        mods += attn(p) + mlp(f"{p}.mlp", None) + norms(p)
    if _get(cfg, "mtp_num_hidden_layers", _get(cfg, "num_nextn_predict_layers", 0)):
        mods += [Module("mtp.fc", H, 2 * H), Module("mtp.pre_fc_norm_embedding.weight", H, 1, "param"),
                 Module("mtp.pre_fc_norm_hidden.weight", H, 1, "param"), Module("mtp.norm.weight", H, 1, "param")]
    if isinstance(root.get("vision_config"), dict):
        mods += _qwen_vision(root["vision_config"])
    return mods


def _qwen_vision(v: dict[str, Any]) -> list[Module]:
    """Qwen3-VL-style ViT: patch embedding, learned positions, `depth` blocks, the merger and deepstack mergers."""
    hv, iv, depth = int(_get(v, "hidden_size", 1152)), int(_get(v, "intermediate_size", 4304)), int(_get(v, "depth", 27))
    out, m = int(_get(v, "out_hidden_size", 3584)), int(_get(v, "spatial_merge_size", 2))
    patch = int(_get(v, "in_channels", 3)) * int(_get(v, "temporal_patch_size", 2)) * int(_get(v, "patch_size", 16)) ** 2
    mods = [Module("model.visual.patch_embed.proj", hv, patch, "vision"),
            Module("model.visual.pos_embed", int(_get(v, "num_position_embeddings", 2304)), hv, "vision")]
    for b in range(depth):
        p = f"model.visual.blocks.{b}"
        mods += [Module(f"{p}.attn.qkv", 3 * hv, hv + 1, "vision"), Module(f"{p}.attn.proj", hv, hv + 1, "vision"),
                 Module(f"{p}.mlp.linear_fc1", iv, hv + 1, "vision"), Module(f"{p}.mlp.linear_fc2", hv, iv + 1, "vision"),
                 Module(f"{p}.norms", 4 * hv, 1, "vision")]
    merged = hv * m * m
    for k in range(1 + len(_get(v, "deepstack_visual_indexes", []))):
        p = "model.visual.merger" if k == 0 else f"model.visual.deepstack_merger_list.{k - 1}"
        mods += [Module(f"{p}.linear_fc1", merged, merged + 1, "vision"), Module(f"{p}.linear_fc2", out, merged + 1, "vision"),
                 Module(f"{p}.norm", 2 * (hv if k == 0 else merged), 1, "vision")]
    return mods


_NEMOTRON = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}


def _nemotron_h(root: dict[str, Any], cfg: dict[str, Any], full: set[int]) -> list[Module]:
    """Nemotron-H: a layer pattern of Mamba-2 mixers, attention, relu2 MLPs and (latent) MoE."""
    H = int(cfg["hidden_size"])
    blocks = cfg.get("layers_block_type") or [_NEMOTRON[c] for c in cfg["hybrid_override_pattern"]]
    nh, hdm = int(_get(cfg, "mamba_num_heads", 128)), int(_get(cfg, "mamba_head_dim", 64))
    groups, state = int(_get(cfg, "n_groups", 8)), int(_get(cfg, "ssm_state_size", 128))
    kernel = int(_get(cfg, "conv_kernel", 4))
    d_inner, conv_dim = nh * hdm, nh * hdm + 2 * groups * state
    heads, kv, hd = int(cfg["num_attention_heads"]), int(_get(cfg, "num_key_value_heads", 8)), int(_get(cfg, "head_dim", 128))

    def block(p: str, kind: str) -> list[Module]:
        if kind == "mamba":
            return [Module(f"{p}.in_proj", 2 * d_inner + 2 * groups * state + nh, H),
                    Module(f"{p}.conv1d.weight", conv_dim, kernel + 1, "param"),
                    Module(f"{p}.A_log", 3 * nh, 1, "param32"), Module(f"{p}.norm.weight", d_inner, 1, "param"),
                    Module(f"{p}.out_proj", H, d_inner)]
        if kind == "attention":
            return _gqa(p, H, heads, kv, hd)
        if kind == "mlp":
            return _mlp(p, H, int(cfg["intermediate_size"]), gated=False)
        E, mi = int(cfg["n_routed_experts"]), int(cfg["moe_intermediate_size"])
        latent = cfg.get("moe_latent_size")
        inner = int(latent) if latent else H
        mods = _experts(p, E, inner, mi, gated=False) + [Module(f"{p}.gate.weight", E, H + 1, "router")]
        if latent:
            mods += [Module(f"{p}.fc1_latent_proj", inner, H), Module(f"{p}.fc2_latent_proj", H, inner)]
        si = int(_get(cfg, "moe_shared_expert_intermediate_size", 0)) * int(_get(cfg, "n_shared_experts", 1))
        if si:
            mods += _mlp(f"{p}.shared_experts", H, si, gated=False)
        return mods

    mods: list[Module] = []
    for i, kind in enumerate(blocks):
        p = f"backbone.layers.{i}"
        mods += block(f"{p}.mixer", kind) + [Module(f"{p}.norm.weight", H, 1, "param")]
    mods += _ends("backbone.", cfg, H, embed="backbone.embeddings")
    pattern = cfg.get("mtp_hybrid_override_pattern") or ""
    for j in range(int(_get(cfg, "num_nextn_predict_layers", 0))):
        for k, c in enumerate(pattern):
            p = f"mtp.layers.{j * len(pattern) + k}"
            mods += block(f"{p}.mixer", _NEMOTRON[c]) + [Module(f"{p}.norm.weight", H, 1, "param")]
        mods += [Module(f"mtp.layers.{j}.eh_proj", H, 2 * H), Module(f"mtp.layers.{j}.norms", 3 * H, 1, "param")]
    return mods


def _kda(root: dict[str, Any], cfg: dict[str, Any], full: set[int]) -> list[Module]:
    """Kimi Linear / Kimi K3: MLA on the full layers, KDA elsewhere, a dense first block then (latent) MoE."""
    H = int(cfg["hidden_size"])
    lac = cfg["linear_attn_config"]
    nh, hd, kernel = int(lac["num_heads"]), int(lac["head_dim"]), int(_get(lac, "short_conv_kernel_size", 4))
    heads = int(cfg["num_attention_heads"])
    nope, rope, v = int(cfg["qk_nope_head_dim"]), int(cfg["qk_rope_head_dim"]), int(cfg["v_head_dim"])
    kvr, qr = int(cfg["kv_lora_rank"]), cfg.get("q_lora_rank")
    E, mi = int(_get(cfg, "num_experts", 0)), int(_get(cfg, "moe_intermediate_size", 0))
    routed_h = int(_get(cfg, "routed_expert_hidden_size", H))
    dense_first = int(_get(cfg, "first_k_dense_replace", 0))
    pre = "language_model.model." if isinstance(root.get("text_config"), dict) else "model."

    def mla(p: str) -> list[Module]:
        q = ([Module(f"{p}.q_proj", heads * (nope + rope), H)] if not qr else
             [Module(f"{p}.q_a_proj", int(qr), H), Module(f"{p}.q_a_layernorm.weight", int(qr), 1, "param"),
              Module(f"{p}.q_b_proj", heads * (nope + rope), int(qr))])
        gate = [Module(f"{p}.g_proj", heads * v, H)] if cfg.get("mla_use_output_gate") else []
        return q + gate + [Module(f"{p}.kv_a_proj_with_mqa", kvr + rope, H),
                           Module(f"{p}.kv_a_layernorm.weight", kvr, 1, "param"),
                           Module(f"{p}.kv_b_proj", heads * (nope + v), kvr), Module(f"{p}.o_proj", H, heads * v)]

    def kda(p: str) -> list[Module]:
        inner = nh * hd
        return [Module(f"{p}.q_proj", inner, H), Module(f"{p}.k_proj", inner, H), Module(f"{p}.v_proj", inner, H),
                Module(f"{p}.conv1d.weight", 3 * inner, kernel, "param"), Module(f"{p}.A_log", nh, 1, "param32"),
                Module(f"{p}.dt_bias", inner, 1, "param32"), Module(f"{p}.f_a_proj", hd, H),
                Module(f"{p}.f_b_proj", inner, hd), Module(f"{p}.b_proj", nh, H, "router"),
                Module(f"{p}.g_a_proj", hd, H), Module(f"{p}.g_b_proj", inner, hd),
                Module(f"{p}.o_norm.weight", hd, 1, "param"), Module(f"{p}.o_proj", H, inner)]

    def ffn(p: str, i: int) -> list[Module]:
        if not E or i < dense_first:
            return _mlp(p, H, int(cfg["intermediate_size"]))
        mods = _experts(p, E, routed_h, mi) + [Module(f"{p}.gate.weight", E, H + 1, "router")]
        if routed_h != H:
            mods += [Module(f"{p}.latent_down", routed_h, H), Module(f"{p}.latent_up", H, routed_h)]
        shared = int(_get(cfg, "num_shared_experts", 0))
        if shared:
            mods += _mlp(f"{p}.shared_experts", H, mi * shared)
        return mods

    mods: list[Module] = []
    for i in range(int(cfg["num_hidden_layers"])):
        p = f"{pre}layers.{i}"
        mods += (mla(f"{p}.self_attn") if i in full else kda(f"{p}.self_attn")) + ffn(f"{p}.mlp", i)
        mods += [Module(f"{p}.norms", 2 * H, 1, "param")]
    mods += _ends(pre, cfg, H, embed=f"{pre}embed_tokens")
    vision = root.get("vision_config")
    if isinstance(vision, dict) and vision.get("vt_hidden_size"):
        hv = int(vision["vt_hidden_size"])
        iv = int(_get(vision, "vt_intermediate_size", 4 * hv))
        for b in range(int(_get(vision, "vt_num_hidden_layers", 27))):
            mods.append(Module(f"vision_tower.blocks.{b}", 4 * hv + 2 * iv, hv, "vision"))
        mods.append(Module("mm_projector", H, 4 * hv + H, "vision"))
    return mods


def _dense_draft(root: dict[str, Any], cfg: dict[str, Any], full: set[int]) -> list[Module]:
    """A dense speculative draft (EAGLE3 / DFlash / DSpark): decoder layers, the context projection, its own head."""
    H, n = int(cfg["hidden_size"]), int(cfg["num_hidden_layers"])
    heads, kv = int(cfg["num_attention_heads"]), int(_get(cfg, "num_key_value_heads", cfg["num_attention_heads"]))
    hd = int(_get(cfg, "head_dim", H // heads))
    dcfg = _get(root, "dflash_config", {})
    features = len(_get(dcfg, "target_layer_ids", [])) or 3
    mods: list[Module] = []
    for i in range(n):
        p = f"layers.{i}"
        mods += _gqa(f"{p}.self_attn", H, heads, kv, hd) + _mlp(f"{p}.mlp", H, int(cfg["intermediate_size"]))
        mods += [Module(f"{p}.norms", 2 * H + 2 * hd, 1, "param")]
    mods += [Module("fc", H, features * H), Module("norm.weight", 2 * H, 1, "param")]
    if cfg.get("draft_vocab_size"):
        mods.append(Module("lm_head", int(cfg["draft_vocab_size"]), H, "lm_head"))
    markov = _get(dcfg, "markov_rank", 0)
    if markov:
        mods.append(Module("markov_head", int(cfg["vocab_size"]) + H, int(markov), "param"))
    return mods


ESTIMATORS: dict[str, Callable[[dict[str, Any], dict[str, Any], set[int]], list[Module]]] = {
    "gdn": _gdn, "nemotron_h": _nemotron_h, "kda": _kda, "draft": _dense_draft,
}


def modules_for(root: dict[str, Any], family: str, full_layers: tuple[int, ...]) -> list[Module]:
    """The module list of a config (root dict) for an estimator family."""
    text = root["text_config"] if isinstance(root.get("text_config"), dict) else root
    fn = ESTIMATORS.get(family)
    if fn is None:
        raise BadInput(f"no weight estimate for this model family ({family}); give a local checkpoint "
                       "directory with safetensors, use --hub online, or pass --weights-gib")
    try:
        return fn(root, text, set(full_layers))
    except (KeyError, TypeError, ValueError) as exc:
        raise BadInput(f"cannot estimate weights from this config.json: {exc!r} is missing or malformed") from None


def module_bytes(m: Module, policy: QuantPolicy) -> int:
    if m.kind == "param32":
        return 4 * m.rows * m.cols
    if m.kind in ("param", "vision", "embed"):
        return 2 * m.rows * m.cols
    return m.count * scheme_bytes(policy.scheme(m.name, m.kind), m.rows, m.cols, policy.block)


def estimate(root: dict[str, Any], family: str, full_layers: tuple[int, ...], policy: QuantPolicy) -> Inventory:
    """An estimated inventory: every module's bytes under the checkpoint's quantization.

    Computed once per (config content, family, layers, policy): a cookbook page asks again for every cell."""
    key = (json.dumps(root, sort_keys=True, default=str), family, tuple(full_layers), policy_key(policy))
    inv = _ESTIMATES.get(key)
    if inv is None:
        inv = _estimate(root, family, full_layers, policy)
        if len(_ESTIMATES) >= _ESTIMATES_MAX:
            _ESTIMATES.pop(next(iter(_ESTIMATES)))
        _ESTIMATES[key] = inv
    return inv


_ESTIMATES: dict[tuple[Any, ...], Inventory] = {}
_ESTIMATES_MAX = 64  # checkpoints a process (the web server) keeps estimates for


def _estimate(root: dict[str, Any], family: str, full_layers: tuple[int, ...], policy: QuantPolicy) -> Inventory:
    pieces = []
    for m in modules_for(root, family, full_layers):
        part, layer, shard = placement(m.name)
        pieces.append(Piece(name=m.name, nbytes=module_bytes(m, policy), part=part, layer=layer,
                            shard=shard if m.kind != "lm_head" else "head"))
    return Inventory(pieces=tuple(pieces), source=Source.ESTIMATE,
                     note=f"estimated from config.json ({family} module list, {policy.label} weights)")
