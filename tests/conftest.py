"""Shared test helpers: run the CLI in-process, build commands, resolve and size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

FIXTURES = Path(__file__).parent / "fixtures"
GIB = 1 << 30


def benchmark_module(name: str):
    """benchmarks/<name>.py as a module (the tables the docs print are its functions), registered under its name so
    its dataclasses resolve their module."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def cli():
    """Invoke `hybridplan ...` in-process; returns (exit_code, stdout, stderr)."""
    from hybridplan.cli import app

    runner = CliRunner()

    def run(*argv: str):
        res = runner.invoke(app, list(argv))
        return res.exit_code, res.stdout, res.stderr

    return run


@pytest.fixture
def cli_json(cli):
    def run(*argv: str):
        code, out, err = cli(*argv)
        return code, json.loads(out)

    return run


def resolve_cmd(text: str, platform=None):
    """(args, geometry, draft) for a command text, through the same path `explain` uses."""
    from hybridplan.engine.sglang.serving.loading import load

    loaded = load(text, platform=platform)
    return loaded.args, loaded.geometry, loaded.draft
