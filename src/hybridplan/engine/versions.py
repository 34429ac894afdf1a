"""Engine versions hybridplan models; the default is the newest whose conformance suite passes."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from hybridplan.errors import BadInput

SUPPORTED = {"0.5.23": "hybridplan.engine.sglang_0_5_23"}
DEFAULT = "0.5.23"


def engine_module(version: str | None = None) -> ModuleType:
    """The module implementing one engine version (`resolve`, `size_pools`, ...)."""
    version = version or DEFAULT
    if version not in SUPPORTED:
        raise BadInput(f"unsupported engine version {version!r}; supported: {', '.join(sorted(SUPPORTED))}")
    return import_module(SUPPORTED[version])
