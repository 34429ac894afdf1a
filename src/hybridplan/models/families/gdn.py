"""Gated DeltaNet hybrids: Qwen3-Next, Qwen3.5 / 3.6 / 3.8 (configs/qwen3_next.py, configs/qwen3_5.py)."""

from __future__ import annotations

from hybridplan.errors import BadInput
from hybridplan.models.config_json import ConfigView, head_dim
from hybridplan.models.families import register
from hybridplan.models.families.common import shared_fields
from hybridplan.models.geometry import KVSpec, Mamba2Mixer, ModelGeometry, StateTP
from hybridplan.models.quant import QuantInfo

ARCHS = (
    "Qwen3NextForCausalLM",
    "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration",
    "Qwen3_5ForCausalLM",
    "Qwen3_5MoeForCausalLM",
)
MODEL_TYPES = ("qwen3_next", "qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text")


def _layer_kinds(text: ConfigView) -> tuple[list[int], list[int], list[str]]:
    """Linear and full layer ids. The engine uses `full_attention_interval` and ignores `layer_types`
    (configs/qwen3_next.py::Qwen3NextConfig.layers_block_type)."""
    n = text.int("num_hidden_layers", 48)
    notes: list[str] = []
    layer_types = text.data.get("layer_types")
    if text.has("full_attention_interval"):
        interval = text.int("full_attention_interval")
        if interval <= 0:
            raise BadInput(f"{text.origin}: `{text.path}full_attention_interval` must be positive, got {interval}")
        full = [i for i in range(n) if (i + 1) % interval == 0]
        if isinstance(layer_types, list):
            from_types = [i for i, t in enumerate(layer_types) if t == "full_attention"]
            if from_types != full:
                notes.append("layer_types disagrees with full_attention_interval; the engine follows the interval")
    elif isinstance(layer_types, list):
        if len(layer_types) != n:
            raise BadInput(f"{text.origin}: `{text.path}layer_types` has {len(layer_types)} entries for {n} layers")
        full = [i for i, t in enumerate(layer_types) if t == "full_attention"]
        notes.append("no full_attention_interval: layers taken from layer_types (the engine itself needs the interval)")
    else:
        raise BadInput(f"{text.origin}: config.json has neither `{text.path}full_attention_interval` nor `{text.path}layer_types`")
    linear = [i for i in range(n) if i not in set(full)]
    return linear, full, notes


@register(archs=ARCHS, model_types=MODEL_TYPES)
def parse_gdn(root: ConfigView, text: ConfigView, *, quant: QuantInfo, source: str) -> ModelGeometry:
    """Qwen3NextConfig fields (defaults are the config class's) -> geometry."""
    linear, full, notes = _layer_kinds(text)
    n_k = text.int("linear_num_key_heads", 16)
    n_v = text.int("linear_num_value_heads", 32)
    k_dim = text.int("linear_key_head_dim", 128)
    v_dim = text.int("linear_value_head_dim", 128)
    mixer = Mamba2Mixer(
        intermediate_size=v_dim * n_v, n_groups=n_k, num_heads=n_v, head_dim=v_dim,
        state_size=k_dim, conv_kernel=text.int("linear_conv_kernel_dim", 4),
    )
    hd = head_dim(text, default=256)
    kv = KVSpec(kind="mha", total_kv_heads=text.int("num_key_value_heads", 2), head_dim=hd,
                v_head_dim=int(text.data.get("v_head_dim") or hd))
    # Qwen3_5TextConfig turns `rope_parameters` into `rope_scaling` when the latter is unset
    rope = text.data.get("rope_parameters") if isinstance(text.data.get("rope_parameters"), dict) else None
    shared = shared_fields(root, text, quant=quant, source=source, default_max_position=32768, rope_override=rope)
    return ModelGeometry(
        family="gdn", num_hidden_layers=len(linear) + len(full), linear_layer_ids=tuple(linear),
        full_attention_layer_ids=tuple(full), mixer=mixer, state_tp=StateTP.LINEAR_ATTN_TP, kv=kv,
        config_ssm_dtype=text.data.get("mamba_ssm_dtype"), mamba_chunk_size=text.data.get("mamba_chunk_size"),
        notes=tuple(notes + [f"engine default {d}" for d in text.defaulted]), **shared,
    )
