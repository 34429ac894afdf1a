"""Fields every family reads the same way: dtype, context length, multimodality, quantization, MTP layers."""

from __future__ import annotations

from typing import Any

from hybridplan.models.config_json import ConfigView, context_length, model_dtype_field
from hybridplan.models.geometry import VisionTower
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


# Config classes that build a vision sub-config even when config.json has none, by model_type: for each attribute
# the VLM memory factor reads, the config.json key that fills it and the class default (None: no such attribute).
_QWEN3_5_VISION = {"num_hidden_layers": ("num_hidden_layers", None), "hidden_size": ("hidden_size", 1152)}
VISION_CLASSES: dict[str, dict[str, tuple[str, int | None]]] = {
    # configs/kimi_k3.py::KimiK3Config; KimiK3VisionConfig aliases num_hidden_layers / hidden_size to vt_*
    "kimi_k3": {"num_hidden_layers": ("vt_num_hidden_layers", 27), "hidden_size": ("vt_hidden_size", 1024)},
    # configs/qwen3_5.py::Qwen3_5Config; its vision config (transformers Qwen3VLVisionConfig) names the depth `depth`
    "qwen3_5": _QWEN3_5_VISION,
    "qwen3_5_moe": _QWEN3_5_VISION,
}


def vision_tower(root: dict[str, Any]) -> VisionTower | None:
    """hf_config.vision_config as the engine loads it (read by memory_hook.py::adjust_mem_fraction_for_vlm).

    The classes in VISION_CLASSES always build one, with their own aliases and defaults; any other config carries
    the config.json `vision_config` keys as they are written.
    """
    written = root.get("vision_config")
    written = written if isinstance(written, dict) else None
    cls = VISION_CLASSES.get(str(root.get("model_type")))
    if cls is None:
        if written is None:
            return None
        return VisionTower(num_hidden_layers=written.get("num_hidden_layers"), hidden_size=written.get("hidden_size"))
    given = written or {}
    return VisionTower(**{attr: given.get(key, default) for attr, (key, default) in cls.items()})


def shared_fields(root: ConfigView, text: ConfigView, *, quant: QuantInfo, source: str,
                  default_max_position: int | None = None, rope_override: dict[str, Any] | None = None) -> dict[str, Any]:
    """Keyword arguments for ModelGeometry that do not depend on the family."""
    arch = (root.data.get("architectures") or text.data.get("architectures") or ["?"])[0]
    # configs/model_config.py: multimodal arch, or an hf_config whose text config is a sub-config
    is_mm = arch in MULTIMODAL_ARCHS or text.path != ""
    if root.data.get("language_model_only"):
        is_mm = False
    ctx_view = text
    if rope_override is not None and not text.data.get("rope_scaling"):
        ctx_view = ConfigView({**text.data, "rope_scaling": rope_override}, text.origin, text.path)
    nextn = text.data.get("num_nextn_predict_layers")
    return dict(
        architecture=str(arch),
        model_type=str(root.data.get("model_type", text.data.get("model_type", ""))),
        config_dtype=model_dtype_field(text),
        kv_cache_quant_algo=quant.kv_cache_quant_algo,
        quant_method=quant.algo or quant.method,
        quantization=quant.engine_method,
        has_quantization_config=isinstance(root.data.get("quantization_config"), dict),
        is_multimodal=bool(is_mm),
        context_length=context_length(ctx_view, default_max_position),
        num_nextn_predict_layers=int(nextn) if isinstance(nextn, int) else None,
        vision=vision_tower(root.data),
        source=source,
    )
