"""Mamba-2 / Mamba-1 state models: Nemotron-H, Falcon-H1, Granite-4.0-H, LFM2, pure Mamba2 and Mamba-1."""

from __future__ import annotations

from hybridplan.errors import BadInput
from hybridplan.models.config_json import ConfigView, head_dim
from hybridplan.models.families import register
from hybridplan.models.families.common import shared_fields
from hybridplan.models.geometry import KVSpec, Mamba1Mixer, Mamba2Mixer, ModelGeometry, StateTP
from hybridplan.models.quant import QuantInfo

_NEMOTRON_CHARS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}


def _notes(view: ConfigView) -> tuple[str, ...]:
    return tuple(f"engine default {d}" for d in view.defaulted)


def _mha(text: ConfigView, *, kv_default: int | None, head_default: int | None) -> KVSpec:
    heads = text.int("num_key_value_heads", kv_default) if kv_default is not None else text.int("num_key_value_heads")
    hd = head_dim(text, default=head_default)
    return KVSpec(kind="mha", total_kv_heads=heads, head_dim=hd, v_head_dim=int(text.data.get("v_head_dim") or hd))


@register(archs=("NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"), model_types=("nemotron_h", "nemotron_h_puzzle"))
def parse_nemotron_h(root: ConfigView, text: ConfigView, *, quant: QuantInfo, source: str) -> ModelGeometry:
    """NemotronHConfig: layers from `layers_block_type` or `hybrid_override_pattern` (M = mamba, * = attention)."""
    blocks = text.data.get("layers_block_type")
    if blocks is None:
        pattern = text.get("hybrid_override_pattern")
        if not isinstance(pattern, str) or any(c not in _NEMOTRON_CHARS for c in pattern):
            raise BadInput(f"{text.origin}: `hybrid_override_pattern` must only contain 'M', '*', '-' or 'E', got {pattern!r}")
        blocks = [_NEMOTRON_CHARS[c] for c in pattern]
    if not isinstance(blocks, list) or any(b not in _NEMOTRON_CHARS.values() for b in blocks):
        raise BadInput(f"{text.origin}: `layers_block_type` must list mamba/attention/mlp/moe, got {blocks!r}")
    linear = [i for i, b in enumerate(blocks) if b == "mamba"]
    full = [i for i, b in enumerate(blocks) if b == "attention"]
    heads = text.int("mamba_num_heads", 128)
    hd = text.int("mamba_head_dim", 64)
    # the engine reads the attribute `n_groups` (from config.json), not the constructor's mamba_n_groups
    if not text.has("n_groups"):
        raise BadInput(f"{text.origin}: config.json has no `n_groups`, which the engine's NemotronHConfig reads")
    mixer = Mamba2Mixer(intermediate_size=heads * hd, n_groups=text.int("n_groups"), num_heads=heads, head_dim=hd,
                        state_size=text.int("ssm_state_size", 128),
                        conv_kernel=text.int("conv_kernel") if text.has("conv_kernel") else text.int("mamba_d_conv", 4))
    kv = _mha(text, kv_default=8, head_default=128)
    chunk = text.data.get("mamba_chunk_size", text.data.get("chunk_size"))
    shared = shared_fields(root, text, quant=quant, source=source, default_max_position=4096)
    if shared["num_nextn_predict_layers"] is None:
        shared["num_nextn_predict_layers"] = 0  # configs/nemotron_h.py::NemotronHConfig default
    return ModelGeometry(
        family="mamba2", num_hidden_layers=len(blocks), linear_layer_ids=tuple(linear),
        full_attention_layer_ids=tuple(full), mixer=mixer, state_tp=StateTP.ATTN_TP, kv=kv,
        config_ssm_dtype=text.data.get("mamba_ssm_dtype"), mamba_chunk_size=chunk, notes=_notes(text), **shared,
    )


@register(archs=("FalconH1ForCausalLM",), model_types=("falcon_h1",))
def parse_falcon_h1(root: ConfigView, text: ConfigView, *, quant: QuantInfo, source: str) -> ModelGeometry:
    """FalconH1Config: every layer has both a mamba mixer and attention."""
    n = text.int("num_hidden_layers")
    d_ssm = text.data.get("mamba_d_ssm")
    intermediate = int(d_ssm) if d_ssm is not None else int(text.get("mamba_expand", 2) * text.int("hidden_size"))
    heads = text.int("mamba_n_heads", 128)
    d_head = text.get("mamba_d_head", "auto")
    d_head = intermediate // heads if d_head == "auto" else int(d_head)
    mixer = Mamba2Mixer(intermediate_size=intermediate, n_groups=text.int("mamba_n_groups", 1), num_heads=heads,
                        head_dim=d_head, state_size=text.int("mamba_d_state", 256), conv_kernel=text.int("mamba_d_conv", 4))
    ids = tuple(range(n))
    return ModelGeometry(
        family="mamba2", num_hidden_layers=n, linear_layer_ids=ids, full_attention_layer_ids=ids, mixer=mixer,
        state_tp=StateTP.ATTN_TP, kv=_mha(text, kv_default=8, head_default=None),
        config_ssm_dtype=text.data.get("mamba_ssm_dtype"), mamba_chunk_size=text.data.get("mamba_chunk_size"),
        notes=_notes(text), **shared_fields(root, text, quant=quant, source=source),
    )


@register(archs=("GraniteMoeHybridForCausalLM",), model_types=("granitemoehybrid",))
def parse_granite(root: ConfigView, text: ConfigView, *, quant: QuantInfo, source: str) -> ModelGeometry:
    """GraniteMoeHybridConfig: `layer_types` mamba / attention; state dtype from env or flag only."""
    n = text.int("num_hidden_layers")
    kinds = text.get("layer_types")
    if not isinstance(kinds, list) or len(kinds) != n:
        raise BadInput(f"{text.origin}: `layer_types` must list {n} layer kinds")
    kinds = ["mamba" if k in ("mamba", "mamba2") else "attention" if k in ("attention", "full_attention") else k for k in kinds]
    linear = [i for i, k in enumerate(kinds) if k == "mamba"]
    if not linear:
        raise BadInput(f"{text.origin}: GraniteMoeHybrid without mamba layers is not a hybrid model")
    heads = text.int("mamba_n_heads", 128)
    intermediate = int(text.get("mamba_expand", 2) * text.int("hidden_size"))
    d_head = text.get("mamba_d_head", "auto")
    d_head = intermediate // heads if d_head == "auto" else int(d_head)
    mixer = Mamba2Mixer(intermediate_size=intermediate, n_groups=text.int("mamba_n_groups", 1), num_heads=heads,
                        head_dim=d_head, state_size=text.int("mamba_d_state", 256), conv_kernel=text.int("mamba_d_conv", 4))
    return ModelGeometry(
        family="mamba2", num_hidden_layers=n, linear_layer_ids=tuple(linear),
        full_attention_layer_ids=tuple(i for i, k in enumerate(kinds) if k == "attention"), mixer=mixer,
        state_tp=StateTP.ATTN_TP, kv=_mha(text, kv_default=8, head_default=None), config_ssm_dtype=None,
        mamba_chunk_size=text.data.get("mamba_chunk_size"), notes=_notes(text),
        **shared_fields(root, text, quant=quant, source=source),
    )


@register(archs=("Mamba2ForCausalLM",), model_types=("mamba2",))
def parse_mamba2(root: ConfigView, text: ConfigView, *, quant: QuantInfo, source: str) -> ModelGeometry:
    """Pure Mamba-2: every layer is a state layer, no KV, state sharded over the global TP."""
    n = text.int("num_hidden_layers")
    # configs/mamba2.py::Mamba2Config.mamba2_cache_params reads the attribute; transformers derives no default
    if not text.has("intermediate_size"):
        raise BadInput(f"{text.origin}: config.json has no `intermediate_size`, which the engine's Mamba2Config reads")
    mixer = Mamba2Mixer(intermediate_size=text.int("intermediate_size"),
                        n_groups=text.int("n_groups", 1), num_heads=text.int("num_heads", 128),
                        head_dim=text.int("head_dim", 64), state_size=text.int("state_size", 128),
                        conv_kernel=text.int("conv_kernel", 4))
    return ModelGeometry(
        family="mamba2", num_hidden_layers=n, linear_layer_ids=tuple(range(n)), full_attention_layer_ids=(),
        mixer=mixer, state_tp=StateTP.TP, kv=KVSpec(kind="none"), config_ssm_dtype=None,
        mamba_chunk_size=text.data.get("chunk_size"), notes=_notes(text),
        **shared_fields(root, text, quant=quant, source=source),
    )


@register(archs=("MambaForCausalLM", "FalconMambaForCausalLM"), model_types=("mamba", "falcon_mamba"))
def parse_mamba1(root: ConfigView, text: ConfigView, *, quant: QuantInfo, source: str) -> ModelGeometry:
    """Mamba-1 / Falcon-Mamba: full-rank state over `intermediate_size`, global TP."""
    n = text.int("num_hidden_layers")
    intermediate = text.int("intermediate_size", int(text.get("expand", 2) * text.int("hidden_size")))
    mixer = Mamba1Mixer(intermediate_size=intermediate, state_size=text.int("state_size", 16),
                        conv_kernel=text.int("conv_kernel", 4))
    return ModelGeometry(
        family="mamba1", num_hidden_layers=n, linear_layer_ids=tuple(range(n)), full_attention_layer_ids=(),
        mixer=mixer, state_tp=StateTP.TP, kv=KVSpec(kind="none"), config_ssm_dtype=None, mamba_chunk_size=256,
        notes=_notes(text), **shared_fields(root, text, quant=quant, source=source),
    )


@register(archs=("Lfm2ForCausalLM", "Lfm2MoeForCausalLM"), model_types=("lfm2", "lfm2_moe"))
def parse_lfm2(root: ConfigView, text: ConfigView, *, quant: QuantInfo, source: str) -> ModelGeometry:
    """LFM2: short-conv state layers (no temporal state); the config's dtype is honoured for LFM2 only."""
    n = text.int("num_hidden_layers")
    kinds = text.data.get("layer_types")
    if kinds is None:
        full_idx = text.get("full_attn_idxs")
        if not isinstance(full_idx, list):
            raise BadInput(f"{text.origin}: `{text.path}full_attn_idxs` must be a list of layer indices")
        full_set = set(full_idx)
        kinds = ["full_attention" if i in full_set else "conv" for i in range(n)]
    elif len(kinds) != n:
        raise BadInput(f"{text.origin}: `{text.path}layer_types` has {len(kinds)} entries for {n} layers")
    linear = [i for i, k in enumerate(kinds) if k in ("conv", "short_conv")]
    full = [i for i, k in enumerate(kinds) if k == "full_attention"]
    hidden = text.int("hidden_size")
    mixer = Mamba2Mixer(intermediate_size=hidden, n_groups=1, num_heads=1, head_dim=hidden, state_size=0,
                        conv_kernel=text.int("conv_L_cache", 3), heads_follow_tp=True)
    is_moe = (root.data.get("model_type") == "lfm2_moe")
    return ModelGeometry(
        family="conv", num_hidden_layers=n, linear_layer_ids=tuple(linear), full_attention_layer_ids=tuple(full),
        mixer=mixer, state_tp=StateTP.ATTN_TP, kv=_mha(text, kv_default=8, head_default=None),
        config_ssm_dtype=None if is_moe else text.data.get("mamba_ssm_dtype"),
        mamba_chunk_size=text.data.get("mamba_chunk_size"), notes=_notes(text),
        **shared_fields(root, text, quant=quant, source=source),
    )
