"""Engine versions hybridplan models; the default is the newest whose conformance suite passes."""

from __future__ import annotations

from importlib import import_module

from hybridplan.engine.api import Engine
from hybridplan.errors import BadInput

# version -> the module whose ENGINE implements engine.api.Engine for it (imported on first use)
SUPPORTED = {"0.5.23": "hybridplan.engine.sglang_0_5_23.engine"}
DEFAULT = "0.5.23"


def for_version(version: str | None = None) -> Engine:
    """The engine API of one release (the default when None); BadInput names the supported ones."""
    version = version or DEFAULT
    if version not in SUPPORTED:
        raise BadInput(f"unsupported engine version {version!r}; supported: {', '.join(sorted(SUPPORTED))}")
    engine: Engine = import_module(SUPPORTED[version]).ENGINE
    return engine
