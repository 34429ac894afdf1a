"""Which sglang release a boot log is from (what the log, or the user, states) and which modelled release checks it.

sglang's own boot lines never name its version (0.5.23 prints it only from `sglang version` and in /server_info), so
a log states it only where the user pasted it with the log. The forms read, each with where it is seen:
  `sglang: 0.5.8.post1`          python -m sglang.check_env (check_env.py::get_package_versions), pasted in issues:
                                 https://github.com/sgl-project/sglang/issues/18729
  `sglang version: 0.5.23`       the `sglang version` command (cli/main.py::version)
  `Name: sglang` + `Version: V`  pip show sglang: https://github.com/THUDM/slime/issues/1455
  `lmsysorg/sglang:v0.5.19`      the docker image tag, also `lmsysorg/sglang-rocm:v0.5.17-rocm720-...`:
                                 https://github.com/sgl-project/sglang/issues/33713,
                                 https://github.com/farbodtavakkoli/OTel/blob/6f7791c059822d1a817982cb06e3b9d7393de56b/inference/sglang/llm/README.md
  `sglang==0.5.21`               a pip pin, also `"sglang[all]"==0.3.0`: https://github.com/sgl-project/sglang/pull/2132
Every pattern has bounded repeats only and reads one line at a time, so a scan is linear in the log's size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal

from hybridplan.engine.sglang.releases import DEFAULT, for_version
from hybridplan.engine.sglang.releases import release_of

# a PEP 440 version as sglang publishes them: 0.5.19, 0.5.19.post1, 0.5.0rc2, 0.0.0.dev11582+g4df60434d
VERSION = r"\d{1,4}\.\d{1,4}\.\d{1,6}(?:\.?(?:post|rc|dev)\d{1,9}){0,3}(?:\+[0-9A-Za-z.]{1,64})?"
_FORMS = (
    re.compile(rf"^\s{{0,8}}sglang(?: version)?:\s{{0,8}}v?(?P<v>{VERSION})\b"),
    re.compile(rf"\bsglang(?:-rocm|-npu|-xpu)?:v(?P<v>{VERSION})"),
    re.compile(rf"\bsglang(?:\[[\w,]{{1,40}}\])?[\"']?\s{{0,2}}==\s{{0,2}}v?(?P<v>{VERSION})"),
)
_PIP_NAME = re.compile(r"^\s{0,8}Name:\s{0,8}sglang\s{0,8}$")
_PIP_VERSION = re.compile(rf"^\s{{0,8}}Version:\s{{0,8}}(?P<v>{VERSION})")
_LEADING = re.compile(rf"^\s{{0,8}}v?(?P<v>{VERSION})(?![\w.])")

Source = Literal["option", "log", "default"]


def stated_in_log(lines: Iterable[str]) -> str | None:
    """The first sglang version the log's lines state, in one of the forms above; None when none does."""
    after_name = False
    for line in lines:
        if after_name and (m := _PIP_VERSION.search(line)):
            return m.group("v")
        after_name = bool(_PIP_NAME.search(line)) or (after_name and line.strip() == "")
        for form in _FORMS:
            if m := form.search(line):
                return m.group("v")
    return None


def stated(text: str) -> str | None:
    """The version a one-line statement names (--log-version, a sidecar's sglang_version): a leading version
    (`0.5.19 (lmsysorg/sglang:v0.5.19)`, `v0.5.20`) or any form above; None when it names none (`commit 7c96971`)."""
    if m := _LEADING.search(text):
        return m.group("v")
    return stated_in_log(text.splitlines()[:1])


@dataclass(frozen=True, kw_only=True)
class Choice:
    """The release that models a log: which, from where (option / log / default), what the log is from, and why."""

    version: str
    source: Source
    log_version: str | None
    note: str | None = None

    @property
    def other_build(self) -> str | None:
        """The log's version where it is not the release modelled (explanations name it), else None."""
        version = stated(self.log_version) if self.log_version else None
        same = version is not None and release_of(version)[0] == self.version
        return None if same or self.log_version is None else self.log_version


def choose(*, engine_version: str | None, log_version: str | None, in_log: str | None) -> Choice:
    """--engine-version > --log-version > what the log states > the default (with a line asking for --log-version)."""
    claimed = log_version or in_log
    if engine_version is not None:
        return Choice(version=for_version(engine_version).version, source="option", log_version=claimed)
    if claimed is None:
        return Choice(version=DEFAULT, source="default", log_version=None, note=(
            f"the log does not say its sglang version; modelled as {DEFAULT}; pass --log-version"))
    where = "--log-version" if log_version else "the log"
    version = stated(claimed) if log_version else claimed
    release, why = release_of(version) if version else (None, "names no sglang release")
    if release is not None:
        return Choice(version=release, source="option" if log_version else "log", log_version=claimed,
                      note=f"{where} says sglang {claimed}: modelled by the {release} rules")
    return Choice(version=DEFAULT, source="default", log_version=claimed, note=(
        f"{where} says sglang {claimed}: {why}; modelled as {DEFAULT} (pass --engine-version to choose)"))
