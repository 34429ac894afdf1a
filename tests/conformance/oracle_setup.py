"""What the conformance tests share (a module of its own: test files import it by a name no other test directory
shares, where `from conftest import` would take whichever conftest was imported first): where the recordings are,
and the oracle interpreter of the opt-in live checks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "conformance" / "recorded"


def missing(why: str) -> NoReturn:
    """Fail under CI (it installs what the check needs), skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


def oracle_python() -> str:
    """HYBRIDPLAN_ORACLE_PYTHON: the oracle interpreter (conformance/setup_oracle.sh builds it and prints it)."""
    given = os.environ.get("HYBRIDPLAN_ORACLE_PYTHON")
    if not given:
        missing("HYBRIDPLAN_ORACLE_PYTHON is not set: conformance/setup_oracle.sh builds the oracle venv")
    return given


def oracle_venv() -> Path:
    """The oracle interpreter's venv, where the setup scripts unpack each release."""
    return Path(oracle_python()).absolute().parent.parent
