"""Every golden case (tests/golden_cases.py) answers exactly as recorded in tests/golden/outputs.json: a move or a
refactor that changes any output of the README examples, explain, plan, logs, compare, ratio, cookbook or the web API,
on either engine, fails here. A change meant to change an output re-records it (scripts/record_golden.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from golden_cases import cases, run_case

RECORDED = json.loads((Path(__file__).parent / "golden" / "outputs.json").read_text())


def test_every_case_is_recorded():
    assert sorted(cases()) == sorted(RECORDED)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_case_answers_as_recorded(name):
    got = run_case(cases()[name])
    assert got == RECORDED[name]
