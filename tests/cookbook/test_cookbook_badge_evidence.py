"""Badges and confidence agree: `cookbook render` (and /api/render) says whether the measured launches back the badge,
from the same evidence and the same verdict the Deploy panel's Memory picture shows for that command; a "Verified"
badge they do not back says so beside it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from hybridplan.calibration.sources import all_evidence
from hybridplan.cli import app
from hybridplan.cookbook.pages import at_version, load_page
from hybridplan.cookbook.render import render
from hybridplan.engine import requests as rq
from hybridplan.engine.api import for_engine

runner = CliRunner()
QWEN = "qwen3.8-27b"


def _explained(page, r) -> dict:
    """The Memory picture's confidence for the rendered command: `explain` on the selection's card, the page's release."""
    gpu = next(h.gpu for h in page.hardware if h.id == r.selection["hw"])
    out = for_engine("sglang", page.engine_version).explain(rq.ExplainRequest(
        command=" ".join([*r.env, page.program, *r.flags]), gpu=gpu, evidence=all_evidence))
    return out["memory"]["verdict"]["confidence"]


@pytest.mark.parametrize("picks", [{}, {"hw": "rtx5090", "quant": "nvfp4-fp4-head", "spec": "dflash"},
                                   {"hw": "gb300", "quant": "bf16", "spec": "dspark"}])
def test_a_measured_cells_verified_badge_is_backed_by_a_measured_confidence(picks):
    """The symptom: the Deploy default (H200 FP8, Verified) showed 'Confidence: extrapolated' from another model on
    another card; the cell's own measurement is now that command measured on that card."""
    page = load_page(QWEN)
    r = render(page, picks, evidence=all_evidence)
    ev = r.badge_evidence
    assert r.badge == "verified" and ev is not None
    assert (ev["level"], ev["backs_badge"], ev["says"]) == ("measured", True, None)
    assert ev["basis"][0].startswith(f"page record {QWEN}:{r.selection['hw']} x ")
    assert _explained(page, r)["level"] == "measured"


def test_a_verified_badge_the_evidence_does_not_back_says_so():
    """Modelled by stock 0.5.23 instead of the 1cf2b8c build the page was measured on, no launch of the command is
    measured under the release modelled: the badge stays the page's, and the answer beside it says why."""
    page = at_version(load_page(QWEN), "0.5.23")
    r = render(page, {}, evidence=all_evidence)
    ev = r.badge_evidence
    assert r.badge == "verified" and ev is not None and ev["backs_badge"] is False
    assert ev["level"] == _explained(page, r)["level"] != "measured"
    assert ev["says"].startswith("Verified by the page, but no measured launch of this command on NVIDIA H200 "
                                 "under sglang 0.5.23")


def test_a_command_the_model_cannot_size_cannot_back_its_badge():
    r = render(load_page("kimi-k3"), {"hw": "b300", "quant": "nvfp4"}, evidence=all_evidence)
    ev = r.badge_evidence
    assert r.badge == "verified" and ev is not None and (ev["level"], ev["backs_badge"]) == (None, False)
    assert "cannot size this command on NVIDIA B300" in ev["says"] and "nvidia/Kimi-K3-NVFP4" in ev["says"]


def test_a_badge_that_claims_no_measurement_is_backed_by_any_confidence():
    r = render(load_page(QWEN), {"hw": "h200", "spec": "dflash"}, evidence=all_evidence)
    assert r.badge == "in-progress" and r.badge_evidence is not None
    assert r.badge_evidence["backs_badge"] is True and r.badge_evidence["says"] is None


def test_without_evidence_render_says_nothing_of_the_badge():
    assert render(load_page(QWEN), {}).badge_evidence is None


def test_cli_prints_the_answer_beside_the_badge():
    backed = runner.invoke(app, ["cookbook", "render", QWEN])
    assert backed.exit_code == 0
    lines = backed.output.splitlines()
    assert lines[1].startswith("Verified") and lines[2].startswith("evidence: measured - 1 measured launch")
    unbacked = runner.invoke(app, ["cookbook", "render", QWEN, "--engine-version", "0.5.23"])
    assert unbacked.exit_code == 0
    assert unbacked.output.splitlines()[2].startswith("badge not backed: Verified by the page, but no measured")
