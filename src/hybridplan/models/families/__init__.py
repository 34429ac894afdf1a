"""One parser per hybrid family, registered by architecture and model_type (configs/hybrid_arch.py::mambaish_config)."""

from __future__ import annotations

from typing import Callable

from hybridplan.errors import BadInput
from hybridplan.models.config_json import ConfigView
from hybridplan.models.geometry import ModelGeometry

# A parser takes (root view, text view, extras) and returns the geometry.
Parser = Callable[..., ModelGeometry]

_BY_ARCH: dict[str, Parser] = {}
_BY_MODEL_TYPE: dict[str, Parser] = {}


def register(*, archs: tuple[str, ...] = (), model_types: tuple[str, ...] = ()) -> Callable[[Parser], Parser]:
    """Register a family parser for these architectures and model types."""

    def deco(fn: Parser) -> Parser:
        for arch in archs:
            _BY_ARCH[arch] = fn
        for mt in model_types:
            _BY_MODEL_TYPE[mt] = fn
        return fn

    return deco


def find_parser(root: ConfigView, text: ConfigView) -> Parser:
    """The parser for this config: by architectures[0], else by model_type (root, then text)."""
    from hybridplan.models.families import gdn, kda, mamba  # noqa: F401  (registration side effect)

    archs = root.data.get("architectures") or text.data.get("architectures") or []
    if archs and not isinstance(archs, list):
        raise BadInput(f"{root.origin}: `architectures` must be a list")
    for arch in archs[:1]:
        if arch in _BY_ARCH:
            return _BY_ARCH[arch]
    for mt in (root.data.get("model_type"), text.data.get("model_type")):
        if mt in _BY_MODEL_TYPE:
            return _BY_MODEL_TYPE[mt]
    arch = archs[0] if archs else None
    known = ", ".join(sorted(_BY_MODEL_TYPE))
    raise BadInput(
        f"{root.origin}: unknown or non-hybrid architecture "
        f"(architectures={arch!r}, model_type={root.data.get('model_type')!r}); "
        f"hybridplan models hybrid state+KV families: {known}"
    )


def architecture_of(root: ConfigView, text: ConfigView, fallback: str) -> str:
    archs = root.data.get("architectures") or text.data.get("architectures") or [fallback]
    return str(archs[0])
