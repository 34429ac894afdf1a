"""Engine versions hybridplan models: every release in behaviours.VERSIONS, one model with per-release switches; and
which modelled release a version string (a log's, a build's, an installed engine's) is."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import import_module

from hybridplan.engine.sglang.protocol import Engine
from hybridplan.engine.sglang.behaviours import PROFILES, VERSIONS, check_version

NAME = "sglang"  # the engine these releases are (engine.api.engines())
SUPPORTED = VERSIONS
BUILDS = tuple(p.name for p in PROFILES)  # the named builds modelled as themselves (a page pins one)
DEFAULT = VERSIONS[-1]
MODEL = "hybridplan.engine.sglang.engine"  # the rules every release shares (imported on first use)


def for_version(version: str | None = None) -> Engine:
    """The engine API of one release (the default when None); BadInput names the supported ones."""
    return _engine(check_version(version or DEFAULT))


@lru_cache(maxsize=None)
def _engine(version: str) -> Engine:
    engine: Engine = import_module(MODEL).engine_for(version)
    return engine


# PEP 440 as sglang publishes it: 0.5.19, 0.5.19.post1, 0.5.20rc1, a local `+...` part on source builds
_PARTS = re.compile(r"v?(\d{1,4})\.(\d{1,4})\.(\d{1,6})((?:\.?(?:post|rc|dev)\d{1,9}){0,3})(\+[0-9A-Za-z.]{1,64})?")


def release_of(version: str) -> tuple[str | None, str]:
    """The modelled release a version string is, or None and why: rcN and .postN count as their release; a dev/source
    build (`0.0.0.dev11582+g4df60434d`) or a release outside the modelled range is none."""
    m = _PARTS.fullmatch(version.strip())
    if m is None:
        return None, "names no sglang release"
    base, suffix, local = ".".join(m.group(1, 2, 3)), m.group(4), m.group(5)
    if "dev" in suffix or local:
        return None, "a dev/source build, not a release: hybridplan models releases only"
    key, lo, hi = _key(base), _key(VERSIONS[0]), _key(VERSIONS[-1])
    if key < lo:
        return None, f"it predates the modelled range {VERSIONS[0]}-{VERSIONS[-1]}"
    if key > hi:
        return None, f"newer than the modelled range {VERSIONS[0]}-{VERSIONS[-1]}"
    if base not in VERSIONS:
        return None, f"not a modelled release ({', '.join(VERSIONS)})"
    return base, "modelled"


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))
