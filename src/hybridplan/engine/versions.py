"""Engine versions hybridplan models: every release in behaviours.VERSIONS, one model with per-release switches."""

from __future__ import annotations

from functools import lru_cache
from importlib import import_module

from hybridplan.engine.api import Engine
from hybridplan.engine.behaviours import VERSIONS, check_version

SUPPORTED = VERSIONS
DEFAULT = VERSIONS[-1]
MODEL = "hybridplan.engine.sglang_0_5_23.engine"  # the rules every release shares (imported on first use)


def for_version(version: str | None = None) -> Engine:
    """The engine API of one release (the default when None); BadInput names the supported ones."""
    return _engine(check_version(version or DEFAULT))


@lru_cache(maxsize=None)
def _engine(version: str) -> Engine:
    engine: Engine = import_module(MODEL).engine_for(version)
    return engine
