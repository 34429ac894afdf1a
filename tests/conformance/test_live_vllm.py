"""The vLLM recordings are the engine's own answers: its newest release re-run live (HYBRIDPLAN_ORACLE_PYTHON; CI sets it
and installs the release) answers every scenario as recorded, its planning and its parser (readings and flags). A
file of its own, so pytest-xdist runs the two live engines on different workers."""

from __future__ import annotations

import pytest
from oracle_setup import check_live

pytestmark = pytest.mark.conformance


def test_the_newest_vllm_answers_as_recorded(tmp_path):
    check_live("vllm", tmp_path)
