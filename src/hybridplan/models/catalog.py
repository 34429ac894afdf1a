"""The bundled catalog of real model configs, keyed by Hugging Face id (data/catalog.yaml + data/configs/)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from importlib.abc import Traversable
from typing import Any

from hybridplan.errors import BadInput


@dataclass(frozen=True, kw_only=True)
class WeightsAsLoaded:
    """How a checkpoint stores its weights when its own tensor list is not bundled: a sibling export's per-layer
    quantization map and the lm_head's scheme, with the source that says so."""

    layer_map_file: str | None = None  # a bundled hf_quant_config.json whose quantized_layers the export shares
    lm_head: str | None = None  # the lm_head's storage scheme when it differs from the layer map's
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class CatalogEntry:
    """One catalog id: its config file, an optional overlay merged over it, and what the tool should say about it."""

    hf_id: str
    config_file: str
    hf_quant_config_file: str | None = None
    overlay: dict[str, Any] = field(default_factory=dict)
    total_size: int | None = None
    weights: WeightsAsLoaded | None = None
    note: str = ""


def _data_dir() -> Traversable:
    return resources.files("hybridplan") / "data"


def _auto_id(name: str) -> str | None:
    """`Org__Name.json` -> `Org/Name`; `draft__SpecForge__x.json` -> `SpecForge/x`; quant sidecars -> None."""
    if not name.endswith(".json") or name.endswith(".hf_quant_config.json"):
        return None
    stem = name[: -len(".json")]
    if stem.startswith("draft__"):
        stem = stem[len("draft__"):]
    org, sep, model = stem.partition("__")
    return f"{org}/{model}" if sep else None


@lru_cache(maxsize=1)
def catalog() -> dict[str, CatalogEntry]:
    """All catalog ids. Validated at load: every referenced file must exist."""
    from hybridplan.packaged import data_yaml

    configs = _data_dir() / "configs"
    names = {p.name for p in configs.iterdir()}
    entries: dict[str, CatalogEntry] = {}
    for name in sorted(names):
        hf_id = _auto_id(name)
        if hf_id:
            sidecar = name[: -len(".json")] + ".hf_quant_config.json"
            entries[hf_id] = CatalogEntry(hf_id=hf_id, config_file=name,
                                          hf_quant_config_file=sidecar if sidecar in names else None)
    raw = data_yaml("catalog.yaml") or {}
    for hf_id, spec in (raw.get("models") or {}).items():
        if spec.get("config") not in names:
            raise BadInput(f"catalog.yaml: {hf_id}: config file {spec.get('config')!r} is not bundled")
        base = entries.get(hf_id)
        entries[hf_id] = CatalogEntry(
            hf_id=hf_id, config_file=spec["config"],
            hf_quant_config_file=base.hf_quant_config_file if base and base.config_file == spec["config"] else None,
            overlay=dict(spec.get("overlay") or {}), total_size=spec.get("total_size"), note=spec.get("note", ""),
            weights=_weights(hf_id, spec.get("weights"), names),
        )
    return entries


def _weights(hf_id: str, raw: object, names: set[str]) -> WeightsAsLoaded | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not str(raw.get("note", "")).strip():
        raise BadInput(f"catalog.yaml: {hf_id}: weights needs a mapping with a note saying where it comes from")
    layer_map = raw.get("layer_map")
    if layer_map is not None and layer_map not in names:
        raise BadInput(f"catalog.yaml: {hf_id}: weights.layer_map {layer_map!r} is not bundled")
    return WeightsAsLoaded(layer_map_file=layer_map, lm_head=raw.get("lm_head"), note=str(raw["note"]))


def listing() -> list[dict[str, str]]:
    """The catalog as `models --json` lists it (id, config file, note), in file order."""
    return [{"id": e.hf_id, "config": e.config_file, "note": e.note} for e in catalog().values()]


def lookup(hf_id: str) -> CatalogEntry | None:
    """The entry for an id (exact, then case-insensitive)."""
    table = catalog()
    if hf_id in table:
        return table[hf_id]
    lowered = {k.lower(): v for k, v in table.items()}
    return lowered.get(hf_id.lower())


def read_text(filename: str) -> str:
    text: str = (_data_dir() / "configs" / filename).read_text()
    return text
