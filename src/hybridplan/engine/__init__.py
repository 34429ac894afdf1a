"""Engine layer: per-version flag registries, argument resolution and pool sizing (pure functions).

`for_version(v)` is the single entry point: it returns the release's `engine.api.Engine`; results are the
version-neutral types of `engine.types`.
"""

from hybridplan.engine.api import for_engine
from hybridplan.engine.sglang.releases import DEFAULT, SUPPORTED, for_version, release_of

__all__ = ["DEFAULT", "SUPPORTED", "for_engine", "for_version", "release_of"]
