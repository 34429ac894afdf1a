"""The checkpoint's quantization, as far as pool sizing cares: its method and its KV-cache quant algo."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class QuantInfo:
    """Quant method / algo names and the KV algo the engine's quant config exposes (None: model dtype)."""

    method: str | None
    algo: str | None
    kv_cache_quant_algo: str | None
    source: str  # "config.json quantization_config", "hf_quant_config.json", or "none"
    engine_method: str | None = None  # ModelConfig.quantization for the checkpoint (e.g. modelopt_mixed)


def _kv_from_modelopt(cfg: dict[str, Any]) -> str | None:
    """KV algo of a ModelOpt config, flat (config.json) or nested (hf_quant_config.json).

    Mirrors layers/quantization/modelopt_quant.py::ModelOpt*Config.from_config.
    """
    if cfg.get("quant_algo") is not None:
        scheme = cfg.get("kv_cache_scheme")
        if isinstance(scheme, dict):
            if scheme.get("type") == "float" and scheme.get("num_bits") == 8:
                return "FP8"
            if cfg.get("quant_algo") == "MIXED_PRECISION" and scheme.get("type") == "float" and scheme.get("num_bits") == 4:
                return "NVFP4"
            return "auto" if cfg.get("quant_algo") == "MIXED_PRECISION" else None
        return cfg.get("kv_cache_quant_algo")
    nested = cfg.get("quantization")
    if isinstance(nested, dict):
        return nested.get("kv_cache_quant_algo")
    return None


def _has_nvfp4_layers(qc: dict[str, Any]) -> bool:
    """A MIXED_PRECISION map with NVFP4 layers (configs/model_config.py::_parse_modelopt_quant_config)."""
    layers = qc.get("quantized_layers") or {}
    return any(str(v.get("quant_algo", "")).upper() in ("NVFP4", "W4A16_NVFP4") for v in layers.values()
               if isinstance(v, dict))


def _modelopt_method(cfg: dict[str, Any]) -> str | None:
    """The method a ModelOpt quant_algo names (configs/model_config.py::_parse_modelopt_quant_config after
    unwrap_modelopt_quantization_config, on hf_quant_config.json or {"quantization": config.json's block});
    None: an algo the engine does not map."""
    flat = cfg.get("quantization", cfg)
    flat = flat if isinstance(flat, dict) else {}
    flat = flat["quantization"] if isinstance(flat.get("quantization"), dict) else flat
    algo = flat.get("quant_algo")
    if not isinstance(algo, str):
        return None
    if algo == "MIXED_PRECISION":
        return "modelopt_mixed" if _has_nvfp4_layers(flat) else "w4afp8"
    if "FP4" in algo:
        return "modelopt_fp4"
    return {"FP8": "modelopt_fp8", "MXFP8": "mxfp8"}.get(algo)


def _mixed_falls_through(qc: dict[str, Any], hf_quant_config: dict[str, Any] | None) -> bool:
    """A modelopt_mixed config.json quantization_config without KV metadata: the engine reads hf_quant_config.json.

    Mirrors model_loader/weight_utils.py::get_quant_config (modelopt_mixed_config_incomplete).
    """
    return (qc.get("quant_algo") == "MIXED_PRECISION" and _has_nvfp4_layers(qc) and "kv_cache_quant_algo" not in qc
            and "kv_cache_scheme" not in qc and isinstance(hf_quant_config, dict))


def quant_info(config: dict[str, Any], hf_quant_config: dict[str, Any] | None) -> QuantInfo:
    """Resolve the quantization the engine sees (configs/model_config.py::_parse_quant_hf_config order).

    config.json `quantization_config` (root, else text config) wins; without one, a ModelOpt
    `hf_quant_config.json` beside it is read.
    """
    qc = config.get("quantization_config")
    if not isinstance(qc, dict) and isinstance(config.get("text_config"), dict):
        qc = config["text_config"].get("quantization_config")
    if isinstance(qc, dict):
        method = qc.get("quant_method")
        if method is None or method == "modelopt":
            engine = _modelopt_method({"quantization": qc}) or "modelopt"
            if _mixed_falls_through(qc, hf_quant_config) and hf_quant_config is not None:
                return QuantInfo(method="modelopt", algo=qc.get("quant_algo"), engine_method=engine,
                                 kv_cache_quant_algo=_kv_from_modelopt(hf_quant_config), source="hf_quant_config.json")
            return QuantInfo(method="modelopt", algo=qc.get("quant_algo"), kv_cache_quant_algo=_kv_from_modelopt(qc),
                             source="config.json quantization_config", engine_method=engine)
        return QuantInfo(method=method, algo=qc.get("quant_algo") or qc.get("format"), engine_method=method,
                         kv_cache_quant_algo=qc.get("kv_cache_quant_algo"), source="config.json quantization_config")
    if isinstance(hf_quant_config, dict):
        nested = hf_quant_config.get("quantization", hf_quant_config)
        return QuantInfo(method="modelopt", algo=nested.get("quant_algo"),
                         engine_method=_modelopt_method(hf_quant_config),
                         kv_cache_quant_algo=_kv_from_modelopt(hf_quant_config), source="hf_quant_config.json")
    return QuantInfo(method=None, algo=None, kv_cache_quant_algo=None, source="none")
