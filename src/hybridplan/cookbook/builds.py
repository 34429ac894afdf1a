"""Which sglang release a page's build is (data/sglang_builds.yaml), and so which release (or named build profile,
engine/sglang/behaviours.py PROFILES) models a page that pins a build without an explicit engine_version."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Optional

from hybridplan.engine.api import DEFAULT, SUPPORTED, release_of
from hybridplan.engine.api import profile as build_profile
from hybridplan.errors import BadInput

_HEX = re.compile(r"[0-9a-f]{7,40}")
_FILE = "sglang_builds.yaml"


@dataclass(frozen=True, kw_only=True)
class Build:
    """One build commit: the modelled release it is (None: no release), the build profile that models it when it is
    no release, the releases around it, and the sources."""

    commit: str
    release: Optional[str]
    profile: Optional[str]
    after: Optional[str]
    before: Optional[str]
    sources: tuple[str, ...]
    note: str

    def where(self) -> str:
        """'a dev build between 0.5.17 and 0.5.18' (what is known of its place)."""
        if self.after and self.before:
            return f"a dev build between {self.after} and {self.before}"
        if self.after or self.before:
            return f"a dev build {'after ' + self.after if self.after else 'before ' + str(self.before)}"
        return "a build whose release is unknown"


def parse(data: Any) -> tuple[Build, ...]:
    """The table from the parsed YAML; a malformed entry is a BadInput naming the field."""
    if not isinstance(data, dict) or not isinstance(data.get("builds"), list):
        raise BadInput(f"{_FILE}: expected a mapping with a `builds` list")
    out = []
    for i, raw in enumerate(data["builds"]):
        where = f"{_FILE}: builds[{i}]"
        if not isinstance(raw, dict) or set(raw) != {"commit", "release", "profile", "after", "before", "sources",
                                                     "note"}:
            raise BadInput(f"{where}: expected exactly commit, release, profile, after, before, sources, note")
        if not isinstance(raw["commit"], str) or not _HEX.fullmatch(raw["commit"]):
            raise BadInput(f"{where}.commit: {raw['commit']!r} is not 7 to 40 lowercase hex digits")
        if raw["release"] is not None and raw["release"] not in SUPPORTED:
            raise BadInput(f"{where}.release: {raw['release']!r} is not a modelled release ({', '.join(SUPPORTED)})")
        if raw["profile"] is not None and (raw["release"] is not None or build_profile(str(raw["profile"])) is None):
            raise BadInput(f"{where}.profile: {raw['profile']!r} is not a build profile (engine/sglang/behaviours.py PROFILES) "
                           "or the build is a release")
        if not raw["sources"] or not all(isinstance(s, str) and s for s in raw["sources"]):
            raise BadInput(f"{where}.sources: at least one source")
        out.append(Build(commit=raw["commit"], release=raw["release"], profile=raw["profile"], after=raw["after"], before=raw["before"],
                         sources=tuple(raw["sources"]), note=str(raw["note"])))
    return tuple(out)


@lru_cache(maxsize=1)
def builds() -> tuple[Build, ...]:
    """The packaged table."""
    from hybridplan.packaged import data_yaml

    return parse(data_yaml(_FILE))


def find(commit: str) -> Build | None:
    """The table's entry for a commit (either may be the other's prefix, at least 7 digits)."""
    c = commit.strip().lower()
    if not _HEX.fullmatch(c):
        return None
    return next((b for b in builds() if b.commit.startswith(c) or c.startswith(b.commit)), None)


def page_version(build: str | None) -> tuple[str, str]:
    """The release that models a page pinning `build` (a commit or a release tag), and a line saying why."""
    if not build:
        return DEFAULT, f"the page names no build and no engine_version: modelled as {DEFAULT}"
    known = find(build)
    if known is not None and known.release is not None:
        return known.release, f"build {build} is sglang {known.release} ({_FILE}): modelled by its rules"
    if known is not None and known.profile is not None:
        p = build_profile(known.profile)
        assert p is not None  # parse() checked it
        return p.name, (f"build {build} is {known.where()}, not a release ({_FILE}): modelled as build profile "
                        f"{p.name}, {p.describe()}")
    if known is not None:
        return DEFAULT, (f"build {build} is {known.where()}, no modelled release and no build profile ({_FILE}): "
                         f"modelled as {DEFAULT}, the newest release, which it may not be")
    release, why = release_of(build)
    if release is not None:
        return release, f"build {build} is sglang {release}: modelled by its rules"
    if _HEX.fullmatch(build.strip().lower()):
        why = f"not in {_FILE}"
    return DEFAULT, f"build {build}: {why}; modelled as {DEFAULT} (give the page an engine_version)"
