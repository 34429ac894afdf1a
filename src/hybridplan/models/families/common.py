"""Fields every family reads the same way: dtype, context length, multimodality, quantization, MTP layers."""

from __future__ import annotations

from hybridplan.models.config_json import ConfigView, context_length, model_dtype_field
from hybridplan.models.quant import QuantInfo

# configs/model_config.py::multimodal_model_archs, the hybrid entries
MULTIMODAL_ARCHS = frozenset({
    "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration",
    "Lfm2VlForConditionalGeneration",
    "NemotronH_Nano_VL_V2",
    "NemotronH_Nano_Omni_Reasoning_V3",
    "NemotronH_Omni_Reasoning_V3",
})


def shared_fields(root: ConfigView, text: ConfigView, *, quant: QuantInfo, source: str,
                  default_max_position: int | None = None, rope_override: dict | None = None) -> dict:
    """Keyword arguments for ModelGeometry that do not depend on the family."""
    arch = (root.data.get("architectures") or text.data.get("architectures") or ["?"])[0]
    # configs/model_config.py: multimodal arch, or an hf_config whose text config is a sub-config
    is_mm = arch in MULTIMODAL_ARCHS or text.path != ""
    if root.data.get("language_model_only"):
        is_mm = False
    ctx_view = text
    if rope_override is not None and not text.data.get("rope_scaling"):
        ctx_view = ConfigView({**text.data, "rope_scaling": rope_override}, text.origin, text.path)
    vision = root.data.get("vision_config") if isinstance(root.data.get("vision_config"), dict) else None
    nextn = text.data.get("num_nextn_predict_layers")
    return dict(
        architecture=str(arch),
        model_type=str(root.data.get("model_type", text.data.get("model_type", ""))),
        config_dtype=model_dtype_field(text),
        kv_cache_quant_algo=quant.kv_cache_quant_algo,
        quant_method=quant.algo or quant.method,
        is_multimodal=bool(is_mm),
        context_length=context_length(ctx_view, default_max_position),
        num_nextn_predict_layers=int(nextn) if isinstance(nextn, int) else None,
        vision_layers=(vision or {}).get("num_hidden_layers"),
        vision_hidden=(vision or {}).get("hidden_size"),
        source=source,
    )
