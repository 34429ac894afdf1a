"""The README's `$ hybridplan ...` examples print what the README shows: each line under a command (until the next
`$` line or the end of the block) appears in the command's output, whitespace-normalised."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def examples() -> list[tuple[str, list[str]]]:
    """(command, expected lines) for each `$ hybridplan` line in the README's bash blocks."""
    out: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S):
        cmd: str | None = None
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith("$ "):
                cmd = line[2:].strip()
                out.append((cmd, []))
            elif cmd is not None and line.strip():
                out[-1][1].append(line.strip())
    return out


def _norm(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("command, expected", [e for e in examples() if e[0].startswith("hybridplan ")],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_readme_example_prints_what_the_readme_shows(cli, monkeypatch, command, expected):
    monkeypatch.setenv("COLUMNS", "400")
    argv = shlex.split(command)[1:]
    code, out, err = cli(*argv)
    assert code in (0, 1), err
    got = _norm(out)
    for line in expected:
        assert _norm(line) in got, line


def test_the_fresh_machine_command_names_a_gpu():
    first = re.search(r"```bash\n(.*?)```", README.read_text(), flags=re.S).group(1)
    assert "--gpu rtx5090" in first and "--pool-budget-gib" not in first
