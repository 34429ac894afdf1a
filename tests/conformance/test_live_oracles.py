"""The recordings are the engines' own answers: the newest release of each engine is re-run live in the oracle
interpreter (HYBRIDPLAN_ORACLE_PYTHON; CI sets it and installs both) on today's scenarios, and every answer must
equal the recorded one. Skips where no oracle interpreter is given or the release is not unpacked (fails under CI)."""

from __future__ import annotations

import pytest
from oracle_setup import RECORDED, missing, oracle_python

from hybridplan.conformance import recorded
from hybridplan.conformance.oracle import ENGINES, oracle
from hybridplan.conformance.runner import NoEngine, run_oracle

pytestmark = pytest.mark.conformance


@pytest.mark.parametrize("engine", ENGINES)
def test_the_newest_release_answers_as_recorded(engine, tmp_path):
    described = oracle(engine)
    version = described.releases[-1]
    python = oracle_python()
    try:
        described.pythonpath(python, version)
    except NoEngine as exc:
        missing(str(exc))
    cases = described.cases(version, tmp_path)
    rec = recorded.load(described, version, RECORDED, cases, tmp_path)
    header, answers = run_oracle(described, python, [c.payload for c in cases], version=version)
    live = recorded.portable(answers, tmp_path)
    differ = [f"{sid}: live {live[sid]!r} recorded {rec.answers[sid]!r}" for sid in rec.answers
              if live[sid] != rec.answers[sid]]
    print(f"\n{engine} {header['version']} live: {len(cases)} scenarios, {len(differ)} answers differ from the recording")
    assert (header["engine"], header["version"]) == (rec.header["engine"], rec.header["version"])
    assert not differ, "\n".join(differ[:5]) + f"\nre-record: {recorded.rerecord(engine, version)}"
