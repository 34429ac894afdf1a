"""Running a conformance/ setup script from a test (a module of its own: test files import it by a name no other
test directory shares, where `from conftest import` would take whichever conftest was imported first)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_setup(script: str, *args: str, failure: str) -> str:
    """Run conformance/<script> (it builds or reuses what an oracle needs) and return the last line it prints; a
    failure fails the test under CI and skips it elsewhere, with `failure` and the script's last error line."""
    proc = subprocess.run(["bash", str(ROOT / "conformance" / script), *args], capture_output=True, text=True,
                          timeout=1500)
    if proc.returncode != 0:
        why = f"{failure}: {proc.stderr.strip().splitlines()[-1:]}"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return proc.stdout.strip().splitlines()[-1]
