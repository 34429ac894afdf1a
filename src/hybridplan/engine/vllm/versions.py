"""Which modelled vLLM release a vLLM version string is modelled by: every string a vLLM build prints resolves.

vLLM takes its version from git through setuptools-scm (vcs-versioning in 0.34.0's vllm/_version.py) with the
default `guess-next-dev` scheme: a build N commits past the newest tag T is T's next version with `.devN+g<hash>`,
the next version of a final tag vX.Y.Z being X.Y.(Z+1) and of a release candidate vX.Y.ZrcK being X.Y.Zrc(K+1).
So `0.20.2rc1.dev9+g01d4d1ad3` is 9 commits past the v0.20.2rc0 tag: ahead of 0.20.1 and behind 0.20.2, PEP 440
orders it the same way (X.Y.Z.devN < X.Y.ZrcK.devN < X.Y.ZrcK < X.Y.Z < X.Y.Z.postN), and it carries 0.20.1's code
plus commits that no release had yet. The rule: a version is modelled by the newest modelled release that is not
newer than it (PEP 440), with a note naming the build, unless it is that release exactly; a version older than every
modelled release by the oldest, a newer one by the newest, each with a note. `--engine-version` picks another."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hybridplan.errors import BadInput

# PEP 440 as vLLM builds print it: 0.20.1, v0.20.1, 0.20.2rc1, 0.20.2rc1.dev9+g01d4d1ad3, 0.19.1.post1,
# 0.11.1.dev5+gabc.cu129, and the `+cu129` style local part of the PyTorch-index wheels
_VERSION = re.compile(r"v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,6}))?(?:\.?(a|b|rc)(\d{1,9}))?(?:\.?post(\d{1,9}))?"
                      r"(?:\.?dev(\d{1,9}))?(?:\+([0-9A-Za-z.]{1,64}))?")
_PRE = {"a": 0, "b": 1, "rc": 2}


@dataclass(frozen=True, kw_only=True)
class Resolved:
    """The modelled release a version string is modelled by, and the note saying how (None: it is that release)."""

    release: str
    note: str | None


def _key(m: re.Match[str]) -> tuple[int, ...]:
    """The PEP 440 sort key of a matched version: a dev build sorts before its pre-release, which sorts before the
    release, which sorts before its post releases."""
    major, minor, micro = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    pre = (_PRE[m.group(4)], int(m.group(5))) if m.group(4) else (3, 0)
    post = int(m.group(6)) + 1 if m.group(6) else 0
    dev = int(m.group(7)) if m.group(7) else 1 << 40  # no dev part sorts after every dev build
    if m.group(7) and not m.group(4) and not m.group(6):
        pre = (-1, 0)  # X.Y.Z.devN sorts before X.Y.Z's pre-releases
    return major, minor, micro, *pre, post, dev


def parse(version: str) -> re.Match[str]:
    """The version's parts; BadInput when it is no PEP 440 version."""
    m = _VERSION.fullmatch(version.strip())
    if m is None:
        raise BadInput(f"--engine-version: {version!r} is not a vLLM version (e.g. 0.33.0, 0.29.1rc1.dev339+g1a2b3c4)")
    return m


def resolve(version: str, modelled: tuple[str, ...]) -> Resolved:
    """The modelled release (`modelled`, oldest first) that models `version`, with the note that says why."""
    m = parse(version)
    plain = ".".join(str(int(p or 0)) for p in m.group(1, 2, 3))
    if plain in modelled and not any(m.group(i) for i in (4, 6, 7)):  # a local part alone: the same code
        return Resolved(release=plain, note=None)
    key = _key(m)
    keys = [(_key(parse(r)), r) for r in modelled]
    older = [r for k, r in keys if k <= key]
    pick = "pass --engine-version to model another"
    if not older:
        return Resolved(release=modelled[0], note=(
            f"vLLM {version} is older than every modelled release ({modelled[0]}-{modelled[-1]}): modelled as "
            f"{modelled[0]}, the oldest; {pick}"))
    release = older[-1]
    if release == modelled[-1] and key > keys[-1][0] and not m.group(7) and not m.group(4):
        return Resolved(release=release, note=(
            f"vLLM {version} is newer than every modelled release ({modelled[0]}-{modelled[-1]}): modelled as "
            f"{release}, the newest; {pick}"))
    kind = ("a dev build" if m.group(7) else "a release candidate" if m.group(4) else "a post release"
            if m.group(6) else "a local build" if m.group(8) else "not a modelled release")
    commits = f", {int(m.group(7))} commits past its last tag" if m.group(7) else ""
    return Resolved(release=release, note=(
        f"vLLM {version} is {kind}{commits}: modelled as {release}, the newest modelled release not newer than it "
        f"(the release it branches from); {pick}"))
