"""The live oracle checks share the machine with the rest of the suite."""

from __future__ import annotations

import os

import pytest


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
