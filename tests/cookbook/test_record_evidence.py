"""The bundled pages' measured launches as a verdict's evidence: the shipped table (data/evidence.json, `pages`) holds every
launch the pages record and every selection their cells' measurements cover, exactly as the pages derive them, so a
verdict loses no measured evidence and a page's own measured cells are "measured" on their card."""

from __future__ import annotations

import json
from dataclasses import asdict
from importlib import resources

import pytest

from hybridplan.cookbook.pages import bundled_ids, load_page
from hybridplan.evidence_table import TABLE
from hybridplan.cookbook.record_evidence import page_evidence, points
from hybridplan.evidence import same_class
from hybridplan.hardware.catalog import catalog, lookup


@pytest.fixture(scope="module")
def derived():
    return {pid: points(load_page(pid)) for pid in bundled_ids()}


def test_the_shipped_table_is_what_the_pages_derive(derived):
    """Fails after a page's records or measurements change (or a rule that moves how they resolve) until
    `python scripts/record_evidence.py` writes the table again."""
    shipped = json.loads((resources.files("hybridplan") / "data" / TABLE).read_text())["pages"]
    assert shipped == {pid: [json.loads(json.dumps(asdict(p))) for p in pts] for pid, pts in derived.items()}


def test_every_card_gets_the_launches_of_every_page_that_transfer_to_it(derived):
    every = [p for pts in derived.values() for p in pts]
    for gpu in catalog():
        assert page_evidence(gpu, "0.5.23") == tuple(p for p in every if p.gpu == gpu.id or same_class(gpu, p.gpu))


def test_the_rtx5090_dflash_pin_is_a_record():
    five = page_evidence(lookup("rtx5090"), "0.5.23")
    pin = next(p for p in five if p.label == "qwen3.8-27b:dflash-fp32-ht-pin")
    assert (pin.outcome, pin.mem_fraction_static, pin.max_running_requests, pin.version) == ("served", 0.895, 1,
                                                                                          "1cf2b8c")


def test_a_measured_cell_is_evidence_for_every_selection_its_measurements_cover(derived):
    """The H200 FP8 cell's measurement covers every overlay but DFLASH: each such Deploy command is a point on the
    H200, at the cell's pinned fraction, measured on the cell's build and cited to its source."""
    h200 = [p for p in page_evidence(lookup("h200"), "0.5.23") if p.label.startswith("qwen3.8-27b:h200 x default x fp8")]
    assert h200 and all(p.gpu == "h200" and p.outcome == "served" and p.mem_fraction_static == 0.85 for p in h200)
    assert {p.source for p in h200} == {"sgl-project/sglang#35825"}
    assert not [p for p in h200 if "spec=dflash" in p.label]
    assert {p.model for p in h200} >= {"Qwen/Qwen3.8-27B-FP8"}
    kimi = [p for p in derived["kimi-k3"] if p.gpu == "b300"]
    assert kimi and {p.build for p in kimi} == {"v0.5.18 @ 71de97b2"}
