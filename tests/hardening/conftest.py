"""Helpers for the hardening tests: the bad-input contract (exit 2, one line naming the field, a JSON error object
under --json) checked through the CLI, and a bundled config to mutate."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

@pytest.fixture
def refused():
    """Run `hybridplan <argv>` twice (plain, then with --json after the `json_at` leading words) and check the
    bad-input contract; returns the plain stderr line."""
    from hybridplan.cli import app

    runner = CliRunner()

    def check(argv: list[str], field: str, *, json_at: int = 1, code: int = 2) -> str:
        res = runner.invoke(app, argv)
        err = res.stderr.strip()
        assert res.exit_code == code, (res.exit_code, res.stdout, res.stderr)
        assert len(err.splitlines()) == 1 and "Traceback" not in res.stdout + res.stderr, res.stderr
        assert field in err, (field, err)
        res = runner.invoke(app, [*argv[:json_at], "--json", *argv[json_at:]])
        assert res.exit_code == code and res.stderr.strip() == "", res.stderr
        error = json.loads(res.stdout)["error"]
        assert field in error["message"] and error["type"] in ("BadInput", "UsageError", "Unreadable", "ValueError",
                                                               "AssertionError"), error
        return err

    return check
