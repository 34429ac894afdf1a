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


def test_the_fresh_machine_commands_make_their_own_environment():
    """Both commands start from a new venv (a bare `pip install` fails on a PEP 668 system Python)."""
    first, second = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)[:2]
    for block in (first, second):
        assert block.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -e ")
    assert "python -m pytest -q" in second


def test_the_python_example_prints_what_the_readme_shows():
    """The README's ```pycon blocks run as doctests (the Python API's worked example)."""
    import doctest

    blocks = re.findall(r"```pycon\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    out: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for i, block in enumerate(blocks):
        runner.run(doctest.DocTestParser().get_doctest(block, {}, f"README pycon {i}", str(README), 0), out=out.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted >= 10, "".join(out)


def test_the_guard_example_prints_what_the_readme_shows(tmp_path):
    """The README's ```console `$ hybridplan guard` example: its stderr lines and its `$ echo $?`. It runs with an
    empty PATH, so a launch the guard passed could not start anything."""
    import subprocess
    import sys

    block = next(b for b in re.findall(r"```console\n(.*?)```", README.read_text(), flags=re.S)
                 if "$ hybridplan guard" in b)
    lines = block.replace("\\\n", " ").splitlines()
    command = shlex.split(lines[0][2:])
    expected = [line for line in lines[1:] if not line.startswith("$ ") and line.strip()]
    proc = subprocess.run([sys.executable, "-m", "hybridplan", *command[1:]], capture_output=True, text=True,
                          timeout=300, env={"PATH": str(tmp_path), "HOME": str(tmp_path)})
    assert expected[-1] == str(proc.returncode)
    assert [line for line in expected[:-1] if _norm(line) not in _norm(proc.stderr)] == [], proc.stderr


def test_the_guard_s_container_examples_run_launches_that_serve():
    """The docker compose and Kubernetes examples: `hybridplan guard` as the entrypoint, in front of a launch whose
    verdict on an H100 is that it serves."""
    import yaml

    import hybridplan

    section = README.read_text().split("## Pre-flight guard", 1)[1].split("\n## ", 1)[0]
    docs = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", section, flags=re.S)]
    compose = docs[0]["services"]["qwen"]
    kube = docs[1]["containers"][0]
    for argv in (compose["entrypoint"] + compose["command"], kube["command"] + kube["args"]):
        assert argv[:2] == ["hybridplan", "guard"] and "--" in argv
        launch = argv[argv.index("--") + 1:]
        assert hybridplan.preflight(launch, gpu="h100-80gb", environ={}).outcome == "serves", launch
