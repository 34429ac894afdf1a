"""Checkpoint directories both sides read: every bundled catalog config, plus synthetic configs for families
with no bundled checkpoint (Falcon-H1, Granite-4.0-H, Mamba2, Mamba1) and bundled configs with their vision
tower reshaped (the VLM memory factor reads it through each config class's own aliases and defaults).

Each directory holds `config.json` (and `hf_quant_config.json` where the checkpoint has one), so the engine's
ModelConfig and hybridplan's loader read the very same files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridplan.models import catalog as cat
from hybridplan.models.loader import resolve_config


@dataclass(frozen=True, kw_only=True)
class ModelDir:
    """One materialized checkpoint directory."""

    key: str  # catalog id, or `synthetic/<name>`
    path: str
    is_draft: bool
    architecture: str
    is_multimodal: bool = False  # as hybridplan loads it, for the tally (the suite compares it with the engine's)


# Synthetic configs, shaped like the public checkpoints of families the catalog does not bundle.
SYNTHETIC: dict[str, dict[str, Any]] = {
    "synthetic/falcon-h1-1.5b": {
        "architectures": ["FalconH1ForCausalLM"], "model_type": "falcon_h1", "torch_dtype": "bfloat16",
        "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 24, "num_attention_heads": 8,
        "num_key_value_heads": 2, "head_dim": 128, "mamba_d_ssm": 3072, "mamba_n_heads": 48, "mamba_d_head": 64,
        "mamba_n_groups": 1, "mamba_d_state": 256, "mamba_d_conv": 4, "mamba_chunk_size": 128,
        "max_position_embeddings": 131072, "vocab_size": 65537, "rope_theta": 1e11,
    },
    "synthetic/granite-4.0-h-tiny": {
        "architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid", "torch_dtype": "bfloat16",
        "hidden_size": 1536, "intermediate_size": 512, "shared_intermediate_size": 1024, "num_hidden_layers": 40,
        "layer_types": ["attention" if i % 10 == 5 else "mamba" for i in range(40)],
        "num_attention_heads": 12, "num_key_value_heads": 4, "mamba_n_heads": 48, "mamba_d_head": 64,
        "mamba_expand": 2, "mamba_n_groups": 1, "mamba_d_state": 128, "mamba_d_conv": 4, "mamba_chunk_size": 256,
        "num_local_experts": 64, "num_experts_per_tok": 6, "max_position_embeddings": 131072, "vocab_size": 100352,
        "position_embedding_type": "nope",
    },
    "synthetic/mamba2-2.7b": {
        "architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2", "torch_dtype": "bfloat16",
        "hidden_size": 2560, "intermediate_size": 5120, "num_hidden_layers": 64, "expand": 2, "head_dim": 64, "num_heads": 80, "n_groups": 1,
        "state_size": 128, "conv_kernel": 4, "chunk_size": 256, "vocab_size": 50288,
    },
    "synthetic/mamba-1.4b": {
        "architectures": ["MambaForCausalLM"], "model_type": "mamba", "torch_dtype": "float16",
        "hidden_size": 2048, "intermediate_size": 4096, "num_hidden_layers": 48, "state_size": 16, "conv_kernel": 4,
        "vocab_size": 50280,
    },
}


# Bundled configs with top-level keys replaced (a dict value is merged into the config's own dict).
DERIVED: dict[str, tuple[str, dict[str, Any]]] = {
    # a ViT 4.5x the baseline: the factor clamps at 0.95 x 0.8
    "synthetic/qwen3.5-9b-wide-vit": ("Qwen/Qwen3.5-9B",
                                      {"vision_config": {"num_hidden_layers": 48, "hidden_size": 1536}}),
    # no vision_config in config.json: KimiK3Config builds its class default (27 layers of 1024)
    "synthetic/kimi-k3-default-vit": ("moonshotai/Kimi-K3", {"vision_config": None}),
}


def _derive(config: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    out = dict(config)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def _safe(key: str) -> str:
    return key.replace("/", "__")


def _write(directory: Path, config: dict[str, Any], hf_quant: dict[str, Any] | None) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config, indent=1))
    if hf_quant is not None:
        (directory / "hf_quant_config.json").write_text(json.dumps(hf_quant, indent=1))


def _architecture(config: dict[str, Any]) -> str:
    archs = config.get("architectures") or (config.get("text_config") or {}).get("architectures") or ["?"]
    return str(archs[0])


def _target(key: str, directory: Path, config: dict[str, Any]) -> ModelDir:
    from hybridplan.models.loader import load_model

    return ModelDir(key=key, path=str(directory), is_draft=False, architecture=_architecture(config),
                    is_multimodal=load_model(str(directory)).is_multimodal)


def materialize(root: Path) -> dict[str, ModelDir]:
    """Write every catalog config (overlays applied), the synthetic and the derived configs under `root`;
    key -> ModelDir."""
    out: dict[str, ModelDir] = {}
    for key, entry in sorted(cat.catalog().items()):
        src = resolve_config(key)
        directory = root / _safe(key)
        _write(directory, src.config, src.hf_quant_config)
        if entry.config_file.startswith("draft__"):
            out[key] = ModelDir(key=key, path=str(directory), is_draft=True, architecture=_architecture(src.config))
        else:
            out[key] = _target(key, directory, src.config)
    for key, (base, changes) in DERIVED.items():
        src = resolve_config(base)
        config = _derive(src.config, changes)
        _write(root / _safe(key), config, src.hf_quant_config)
        out[key] = _target(key, root / _safe(key), config)
    for key, config in SYNTHETIC.items():
        directory = root / _safe(key)
        _write(directory, config, None)
        out[key] = _target(key, directory, config)
    return out
