"""Regenerating a page whose docs module grew a dimension (Kimi-K3's PD mode): overlay cells keyed without it keep
their measurements on the default role; options hidden by another row stay hidden where no cell exists; a quoted
JSON flag value is one argv token; docs statuses name the image they run on; and a docs pin the engine model refuses
is recorded on its cell (`known_refused`) and graded info by `cookbook check`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hybridplan.cookbook.docs.importer import import_evaluation
from hybridplan.cookbook.docs.node_eval import evaluate_file
from hybridplan.cookbook.engine_view import argv_of
from hybridplan.cookbook.pages import bundled_path, load_page
from hybridplan.cookbook.validate import check_text

PAGES = Path(__file__).parent / "docs_pages"
RECORD = {"protocol": "one server, bench_serving random", "build": "abc1234", "workload": {"isl": 1024, "osl": 128},
          "ttft_ms": 120.0}


@pytest.fixture(scope="module")
def roles():
    return evaluate_file(PAGES / "toy_roles.jsx")


def test_overlay_cells_without_a_new_match_dim_land_on_its_first_option(roles, tmp_path):
    data = import_evaluation(roles, "toy-roles").data
    old = {"match": {"hw": "b200", "strategy": "balanced"}, "note": "measured before PD roles existed",
           "verification": {"status": "in-progress", "build": "abc1234", "measurements": [RECORD]}}
    overlay = {**data, "cells": [old]}
    path = tmp_path / "toy-roles.yaml"
    path.write_text(yaml.safe_dump(overlay, sort_keys=False))
    imp = import_evaluation(roles, merge=str(path), origin="me/docs@0123abc")
    assert imp.exact and imp.page is not None
    cells = {(c.match["hw"], c.match["pd-mode"], c.match["strategy"]): c for c in imp.page.cells}
    unified = cells[("b200", "unified", "balanced")]
    assert unified.note == "measured before PD roles existed" and unified.verification.build == "abc1234"
    assert [m.ttft_ms for m in unified.verification.measurements] == [120.0]
    assert cells[("b200", "prefill", "default")].verification.measurements == []
    assert not any("match no module cell" in n for n in imp.notes)
    assert any("overlay cells without pd-mode=unified are matched" in n for n in imp.notes)


def test_an_option_hidden_by_another_row_is_hidden_on_cell_less_selections_too(roles):
    imp = import_evaluation(roles, "toy-roles")
    strategy = {o["id"]: o["show_when"] for o in imp.data["match_dims"][1]["options"]}
    # read where cells exist only, the condition could name the strategy row itself and hide every option on
    # (unified, default); read on every selection it is the docs' own rule, on the role
    assert strategy == {"balanced": {"equals": {"pd-mode": "unified"}}, "default": {"equals": {"pd-mode": "prefill"}}}
    failing = [f for f in check_text(imp.yaml(), "toy-roles.yaml") if f.severity != "info"]
    assert failing == []  # no row-disabled / no-cell, and the quoted loader config parses


def test_docs_statuses_name_the_image_the_panel_runs_them_with(roles):
    cells = import_evaluation(roles, "toy-roles").data["cells"]
    assert [(c["match"]["hw"], c["verification"]) for c in cells] == [
        ("h200", {"status": "in-progress", "image": "lmsysorg/sglang:toy"}),
        ("b200", {"status": "in-progress", "image": "lmsysorg/sglang:toy-b200"}),
        ("b200", {"status": "in-progress", "image": "lmsysorg/sglang:toy-b200"})]


def test_a_quoted_json_value_is_one_argv_token():
    assert argv_of(["--model-loader-extra-config '{\"enable_multithread_load\": true}'", "--tp-size 8"]) == (
        "--model-loader-extra-config", '{"enable_multithread_load": true}', "--tp-size", "8")
    assert argv_of(["--x 'unbalanced"]) == ("--x", "'unbalanced")


def test_the_kimi_page_keeps_the_docs_pins_and_records_what_the_model_refuses():
    page = load_page("kimi-k3")
    assert len(page.cells) == 49 and len(page.supported_hardware) == 9
    assert {c.match["pd-mode"] for c in page.cells} == {"unified", "prefill", "decode"}
    mi = next(c for c in page.cells if c.match == {"hw": "mi350x", "pd-mode": "unified", "strategy": "balanced"})
    assert "--cuda-graph-max-bs 256" in mi.flags  # the docs' pin, not renamed
    assert [m.ttft_ms for m in mi.verification.measurements] == [604, 23720, 590, 18665]
    assert "removed" in mi.known_refused[0].reason or "gone since 0.5.20" in mi.known_refused[0].reason
    b300 = next(c for c in page.cells if c.match == {"hw": "b300", "pd-mode": "unified", "strategy": "low-latency"})
    assert b300.verification.build == "v0.5.18 @ 71de97b2" and len(b300.verification.measurements) == 4


def test_known_refusals_are_info_and_without_the_entry_the_pin_is_an_error():
    text = bundled_path("kimi-k3").read_text()
    data = yaml.safe_load(text)
    for c in data["cells"]:
        if c["match"]["hw"] == "mi355x":
            c.pop("known_refused")
    bare = yaml.safe_dump(data, sort_keys=False)
    errors = [f for f in check_text(bare, "kimi-k3.yaml", gpu=False) if f.severity == "error"]
    assert {f.rule for f in errors} == {"flag-unknown"} and len(errors) == 2
    assert all("--cuda-graph-max-bs is not a flag of sglang 0.5.23" in f.message for f in errors)
    known = [f for f in check_text(text, "kimi-k3.yaml", gpu=False) if f.rule == "flag-unknown"]
    assert known and all(f.severity == "info" and f.message.startswith("known refusal, ") for f in known)
