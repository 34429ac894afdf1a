"""Which modelled sglang release a version string is: rcN and .postN count as their release; a dev/source build
(`0.0.0.dev11582+g4df60434d`, `0.5.6.post3.dev1154+ge2c8a50b`) or a release outside the modelled range is none."""

from __future__ import annotations

import re

from hybridplan.engine import SUPPORTED

# PEP 440 as sglang publishes it: 0.5.19, 0.5.19.post1, 0.5.20rc1, a local `+...` part on source builds
_PARTS = re.compile(r"v?(\d{1,4})\.(\d{1,4})\.(\d{1,6})((?:\.?(?:post|rc|dev)\d{1,9}){0,3})(\+[0-9A-Za-z.]{1,64})?")


def release_of(version: str) -> tuple[str | None, str]:
    """The modelled release `version` is, or None and why it is none."""
    m = _PARTS.fullmatch(version.strip())
    if m is None:
        return None, "names no sglang release"
    base, suffix, local = ".".join(m.group(1, 2, 3)), m.group(4), m.group(5)
    if "dev" in suffix or local:
        return None, "a dev/source build, not a release: hybridplan models releases only"
    key, lo, hi = _key(base), _key(SUPPORTED[0]), _key(SUPPORTED[-1])
    if key < lo:
        return None, f"it predates the modelled range {SUPPORTED[0]}-{SUPPORTED[-1]}"
    if key > hi:
        return None, f"newer than the modelled range {SUPPORTED[0]}-{SUPPORTED[-1]}"
    if base not in SUPPORTED:
        return None, f"not a modelled release ({', '.join(SUPPORTED)})"
    return base, "modelled"


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))
