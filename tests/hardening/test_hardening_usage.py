"""Usage errors (unknown option, missing argument, bad value, unknown command): a JSON error object on stdout under
--json, otherwise one line on stderr; exit 2 and no traceback either way."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

LAUNCH = ["--", "--model-path", "Qwen/Qwen3.8-27B"]


@pytest.mark.parametrize("argv,field", [
    (["explain", "--bogus", *LAUNCH], "No such option: --bogus"),
    (["ratio", "-C", "4", *LAUNCH], "Missing option '--request-length'"),
    (["ratio", "-L", "x", "-C", "4", *LAUNCH], "'--request-length' / '-L'"),
    (["ratio", "-L", "100", "-C", "4", "--pool-budget-gib", "lots", *LAUNCH], "'--pool-budget-gib'"),
    (["plan", "--gpu", "h200", "-L", "100", "-C", "4"], "plan needs --model or a launch command with --model-path"),
    (["logs", "parse"], "Missing argument 'log'"),
    (["cookbook", "render"], "Missing argument 'PAGE'"),
    (["models", "--bogus"], "No such option: --bogus"),
])
def test_usage_errors(refused, argv, field):
    json_at = 2 if argv[0] in ("logs", "cookbook") else 1
    err = refused(argv, field, json_at=json_at)
    assert err.startswith("error: ")


def test_unknown_command(refused):
    refused(["nosuchcommand"], "No such command 'nosuchcommand'")


def test_json_after_the_launch_command_is_not_hybridplans(cli):
    code, out, err = cli("explain", "--bogus", "--", "--json")
    assert code == 2 and out == "" and err.startswith("error: ") and len(err.strip().splitlines()) == 1


def test_help_and_bare_groups_still_show_help(cli):
    code, out, _ = cli("--help")
    assert code == 0 and "explain" in out
    code, out, err = cli("cookbook")
    assert code == 2 and "render" in out + err


def test_usage_error_from_the_installed_entry_point():
    res = subprocess.run([sys.executable, "-m", "hybridplan", "ratio", "--json", "-L", "zero", "-C", "1", *LAUNCH],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and res.stderr == ""
    assert "'--request-length' / '-L'" in json.loads(res.stdout)["error"]["message"]
    res = subprocess.run([sys.executable, "-m", "hybridplan", "explain", "--nope", *LAUNCH],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and res.stdout == "" and res.stderr.count("\n") == 1 and "--nope" in res.stderr
