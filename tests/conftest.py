"""Shared test helpers: run the CLI in-process, build commands, resolve and size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

FIXTURES = Path(__file__).parent / "fixtures"
GIB = 1 << 30


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
