"""What the conformance tests share (a module of its own: test files import it by a name no other test directory
shares, where `from conftest import` would take whichever conftest was imported first): where the recordings are,
and the oracle interpreter of the opt-in live checks."""

from __future__ import annotations

import json
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


def check_live(engine: str, root: Path) -> None:
    """The newest release of `engine` re-run live in the oracle interpreter, each of its oracles on today's scenarios
    (their files under `root`): every answer must equal the recorded one. Skips where no oracle interpreter is given
    or the release is not unpacked beside it (fails under CI, which installs both)."""
    from hybridplan.conformance import recorded
    from hybridplan.conformance.oracle import of_engine
    from hybridplan.conformance.runner import NoEngine, run_oracle

    python = oracle_python()
    for described in of_engine(engine):
        version = described.releases[-1]
        try:
            described.pythonpath(python, version)
        except NoEngine as exc:
            missing(str(exc))
        cases = described.cases(version, root)
        rec = recorded.load(described, version, RECORDED, cases, root)
        header, answers = run_oracle(described, python, [c.payload for c in cases], version=version)
        live = recorded.portable(answers, root)
        differ = [f"{sid}: live {live[sid]!r} recorded {rec.answers[sid]!r}" for sid in rec.answers
                  if _text(live[sid]) != _text(rec.answers[sid])]
        print(f"\n{described.name} {header['version']} live: {len(cases)} scenarios, {len(differ)} answers differ from "
              "the recording")
        assert (header["engine"], header["version"]) == (rec.header["engine"], rec.header["version"]), header
        assert not differ, "\n".join(differ[:5]) + f"\nre-record: {recorded.rerecord(engine, version)}"


def _text(answer: object) -> str:
    """An answer as canonical JSON text: NaN, which a parser may read, equals itself there."""
    return json.dumps(answer, sort_keys=True)
