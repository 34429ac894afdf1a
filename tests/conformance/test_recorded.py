"""Recorded oracle answers (no engine needed): the same scenarios and answers give the same bytes wherever the
scenario files were written, and a recording that is not for today's scenarios is refused, naming the command that
records it again."""

from __future__ import annotations

import dataclasses
import gzip

import pytest
from oracle_setup import RECORDED

from hybridplan.conformance import recorded
from hybridplan.conformance.oracle import ORACLES, oracle
from hybridplan.conformance.sglang.fixtures import materialize
from hybridplan.conformance.sglang.oracle import as_cases
from hybridplan.conformance.sglang.scenarios import release_scenarios

SGLANG = oracle("sglang")
HEADER = {"header": True, "engine": "sglang", "version": "0.5.23", "gpu_mib": 143771, "python": "3.11.7"}


def _cases(root):
    models = materialize(root)
    return as_cases(release_scenarios(models)[:6], models, "0.5.23")


def _record(directory, cases, root):
    """A recording whose engine answered as hybridplan's model does."""
    file = recorded.path(directory, "sglang", "0.5.23")
    recorded.write(file, HEADER, cases, {c.id: c.predicted for c in cases}, root)
    return file


def test_the_same_answers_give_the_same_bytes_wherever_the_files_were(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    first = _record(tmp_path / "one", _cases(a), a).read_bytes()
    assert _record(tmp_path / "again", _cases(a), a).read_bytes() == first
    assert _record(tmp_path / "two", _cases(b), b).read_bytes() == first
    text = gzip.decompress(first).decode()
    assert str(a) not in text and '"--model-path","$MODELS/Qwen__Qwen3-Next-80B-A3B-Instruct"' in text
    rec = recorded.read(tmp_path / "one" / "sglang-0.5.23.json.gz")
    assert rec.header == HEADER and len(rec.answers) == 6 and "Qwen__Qwen3.5-27B/config.json" in rec.inputs


def test_a_recording_not_for_todays_scenarios_names_the_command_that_records_it(tmp_path):
    root = tmp_path / "models"
    cases = _cases(root)
    again = "python scripts/record_oracles.py --engine sglang --release 0.5.23"
    with pytest.raises(recorded.Stale, match=f"no recording of sglang 0.5.23 .*: run {again}$"):
        recorded.load(SGLANG, "0.5.23", tmp_path, cases, root)
    _record(tmp_path, cases[:-1], root)
    with pytest.raises(recorded.Stale, match=f"1 new \\(first {cases[-1].id}\\); run {again}$"):
        recorded.load(SGLANG, "0.5.23", tmp_path, cases, root)
    changed = dataclasses.replace(cases[0], payload={**cases[0].payload, "gpu_mib": 24564})
    with pytest.raises(recorded.Stale, match=f"1 changed \\(first {cases[0].id}\\), 1 gone"):
        recorded.load(SGLANG, "0.5.23", tmp_path, [changed, *cases[1:-2]], root)
    _record(tmp_path, cases, root)
    assert len(recorded.load(SGLANG, "0.5.23", tmp_path, cases, root).answers) == 6
    (root / "Qwen__Qwen3.5-27B" / "config.json").write_text("{}")
    with pytest.raises(recorded.Stale, match="1 files changed \\(first Qwen__Qwen3.5-27B/config.json\\)"):
        recorded.load(SGLANG, "0.5.23", tmp_path, cases, root)


def test_replay_reports_an_answer_the_engine_recorded_differently(tmp_path):
    root = tmp_path / "models"
    cases = _cases(root)
    answers = {c.id: c.predicted for c in cases}
    sized = next(c.id for c in cases if "K" in c.predicted.get("sizing", {}))
    answers[sized] = {**answers[sized], "sizing": {**answers[sized]["sizing"], "K": answers[sized]["sizing"]["K"] + 1}}
    recorded.write(recorded.path(tmp_path, "sglang", "0.5.23"), HEADER, cases, answers, root)
    only = dataclasses.replace(SGLANG, cases=lambda version, where: _cases(where))
    report = recorded.replay(only, "0.5.23", tmp_path, root)
    [drift] = report.drifts
    assert (drift.scenario, drift.field, drift.engine - drift.hybridplan) == (sized, "sizing.K", 1)
    assert drift.rule.endswith("sizing.handle_max_mamba_cache")
    assert sum(report.counts["outcome"].values()) == 6


def test_every_modelled_release_of_every_oracle_is_recorded_and_nothing_else():
    """One recording a modelled release an oracle (the conformance tests compare with them): none missing, none for a
    release no longer modelled."""
    want = {recorded.path(RECORDED, name, v).name for name in ORACLES for v in oracle(name).releases}
    assert {f.name for f in RECORDED.glob("*.json.gz")} == want
