"""Each sglang release's `serve` flags, from the newest release's registry and the per-release history.

flag_history.json (scripts/gen_flag_history.py) lists, for each release a -> b, the flag records b added, the
records a had that b removed, and a's records of flags whose parsing b changed. Walking it backwards from the base
registry (engine/sglang/flags.json) gives any release's registry in the same JSON shape, so a flag a release
lacks is refused with that release's own parser message (engine/registry.py parses with argparse's rules).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from hybridplan.engine.sglang.behaviours import VERSIONS, base_release, check_version
from hybridplan.engine.registry import FlagRegistry, ParsedFlags, parse_argv, registry_from_json, rewind
from hybridplan.errors import BadInput

BASE_PACKAGE = "hybridplan.engine.sglang"


@lru_cache(maxsize=1)
def history() -> dict[str, Any]:
    """flag_history.json as stored."""
    data: dict[str, Any] = json.loads((resources.files("hybridplan.engine.sglang") / "flag_history.json").read_text())
    return data


@lru_cache(maxsize=1)
def _base() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((resources.files(BASE_PACKAGE) / "flags.json").read_text())
    return data


@lru_cache(maxsize=None)
def registry_json(version: str) -> dict[str, Any]:
    """The flag registry of `version`, shaped like flags.json (engine, version, prog, allow_abbrev, flags)."""
    release = base_release(version)  # a build profile parses with its base release's flags
    hist = history()
    data = rewind(_base(), hist["releases"], tuple(VERSIONS), release)
    return {**data, "version": version, "allow_abbrev": hist["allow_abbrev"][release]}


@lru_cache(maxsize=None)
def registry(version: str) -> FlagRegistry:
    """The flag registry of `version`, indexed for parsing (its own options, defaults and argparse messages)."""
    return registry_from_json(registry_json(version))


@lru_cache(maxsize=4096)
def parse(version: str, argv: tuple[str, ...]) -> ParsedFlags:
    """argv parsed by release `version`'s argparse rules; errors carry its `prog: error:` prefix. Memoised: a cookbook
    page parses each cell's argv several times (the result is never mutated)."""
    reg = registry(version)
    try:
        return parse_argv(reg, argv)
    except BadInput as exc:
        raise BadInput(f"{reg.prog}: error: {exc.message}") from None


def release_delta(version: str) -> dict[str, tuple[str, ...]]:
    """Option strings `version` added and removed relative to the release before it (empty for the oldest)."""
    check_version(version)
    step = next((s for s in history()["releases"] if s["to"] == version), None)
    if step is None:
        return {"added": (), "removed": ()}
    old = {o for f in step["removed"] for o in f["options"]}
    new = {o for f in step["added"] for o in f["options"]}
    return {"added": tuple(sorted(new - old)), "removed": tuple(sorted(old - new))}
