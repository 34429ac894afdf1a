"""Kimi Delta Attention hybrids: Kimi Linear and Kimi K3 (configs/kimi_linear.py, configs/kimi_k3.py)."""

from __future__ import annotations

from hybridplan.errors import BadInput
from hybridplan.models.config_json import ConfigView
from hybridplan.models.families import register
from hybridplan.models.families.common import shared_fields
from hybridplan.models.geometry import KdaMixer, KVSpec, ModelGeometry, StateTP
from hybridplan.models.quant import QuantInfo


@register(archs=("KimiLinearForCausalLM", "KimiK3ForConditionalGeneration"), model_types=("kimi_linear", "kimi_k3"))
def parse_kda(root: ConfigView, text: ConfigView, *, quant: QuantInfo, source: str) -> ModelGeometry:
    """KimiLinearConfig: KDA layers are the 1-based `linear_attn_config.kda_layers`; the rest are MLA."""
    lac = text.sub("linear_attn_config")
    kda_layers = lac.get("kda_layers")
    if not isinstance(kda_layers, list) or not all(isinstance(i, int) for i in kda_layers):
        raise BadInput(f"{text.origin}: `{lac.path}kda_layers` must be a list of layer numbers")
    n = text.int("num_hidden_layers")
    if any(not 1 <= i <= n for i in kda_layers):
        raise BadInput(f"{text.origin}: `{lac.path}kda_layers` numbers layers 1..{n} (num_hidden_layers), "
                       f"got {max(kda_layers)}")
    kda = set(kda_layers)
    linear = [i for i in range(n) if (i + 1) in kda]  # KimiLinearConfig.is_kda_layer
    full = [i for i in range(n) if (i + 1) not in kda]
    heads = lac.int("num_heads")
    hd = lac.int("head_dim")
    mixer = KdaMixer(num_heads=heads, head_dim=hd, num_k_heads=heads, head_k_dim=hd,
                     conv_kernel=lac.int("short_conv_kernel_size", 4))
    # total KV heads as configs/model_config.py::get_total_num_kv_heads reads them (ROCm's MLA backend choice)
    kv = KVSpec(kind="mla", total_kv_heads=text.int("num_key_value_heads", text.int("num_attention_heads")),
                kv_lora_rank=text.int("kv_lora_rank"), qk_rope_head_dim=text.int("qk_rope_head_dim"))
    return ModelGeometry(
        family="kda", num_hidden_layers=n, linear_layer_ids=tuple(linear), full_attention_layer_ids=tuple(full),
        mixer=mixer, state_tp=StateTP.ATTN_TP, kv=kv,
        config_ssm_dtype=None,  # KimiLinearCacheParams uses the dataclass default: env / flag only
        mamba_chunk_size=None, notes=tuple(f"engine default {d}" for d in text.defaulted),
        **shared_fields(root, text, quant=quant, source=source),
    )
