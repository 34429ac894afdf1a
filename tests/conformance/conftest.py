"""The oracle venv (sglang 0.5.23, CPU torch), built or reused by conformance/setup_oracle.sh."""

from __future__ import annotations

import os

import pytest
from oracle_setup import run_setup


@pytest.fixture(scope="session")
def oracle_python() -> str:
    """HYBRIDPLAN_ORACLE_PYTHON, else the repository's .oracle-venv (built on first use). Skips only outside CI."""
    given = os.environ.get("HYBRIDPLAN_ORACLE_PYTHON")
    if given:
        return given
    return run_setup("setup_oracle.sh", failure="the oracle venv could not be built")


@pytest.fixture(scope="session", autouse=True)
def one_oracle_process_under_xdist():
    """Under pytest-xdist every core already runs a test worker: one oracle process a batch (each pays the engine's
    ~6 s import once) costs less CPU than two. HYBRIDPLAN_ORACLE_WORKERS, when set, wins."""
    if "PYTEST_XDIST_WORKER" in os.environ and "HYBRIDPLAN_ORACLE_WORKERS" not in os.environ:
        os.environ["HYBRIDPLAN_ORACLE_WORKERS"] = "1"
        yield
        del os.environ["HYBRIDPLAN_ORACLE_WORKERS"]
    else:
        yield
