"""The shipped evidence table (data/evidence.json) is what its sources derive: the public boot logs and every
engine's launch reports, each resolved by the engine that ran it, so a verdict reading the table loses no evidence;
and a card gets each engine's launches on it and on its class, no other engine's."""

from __future__ import annotations

import json
from dataclasses import asdict
from importlib import resources

from hybridplan.evidence_table import TABLE, on_card
from hybridplan.calibration.launch_reports import report_points
from hybridplan.calibration.log_evidence import log_points
from hybridplan.calibration.sources import all_evidence
from hybridplan.engine.api import engines
from hybridplan.hardware.catalog import lookup

SHIPPED = json.loads((resources.files("hybridplan") / "data" / TABLE).read_text())


def _plain(points):
    return [json.loads(json.dumps(asdict(p))) for p in points]


def test_the_boot_logs_and_reports_are_what_their_files_derive():
    """Fails after data/boot_logs.yaml, a data/<engine>_launch_reports.yaml or a rule that moves how a logged launch
    resolves changes, until `python scripts/record_evidence.py` writes the table again."""
    assert SHIPPED["boot_logs"] == {"boot_logs.yaml": _plain(log_points())}
    assert SHIPPED["launch_reports"] == {engine: _plain(report_points(engine)) for engine in engines()}


def test_each_engine_reads_its_own_launches_on_the_card_and_its_class():
    h100, h200 = lookup("h100-80gb"), lookup("h200")
    vllm = on_card("launch_reports", h200, "vllm")
    assert {p.label for p in vllm} >= {"vllm49064-h100-qwen38-27b"} and all(p.engine == "vllm" for p in vllm)
    assert on_card("launch_reports", h200, "sglang") == ()
    assert {p.label for p in all_evidence("sglang", h100, "0.5.23")} == {"vllm-21348-qwen3-235b-fp8-4xh100"}
    assert not {p.label for p in all_evidence("vllm", h100, "0.33.0")} & {"vllm-21348-qwen3-235b-fp8-4xh100"}
