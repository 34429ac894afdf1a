"""Docs config modules in and out: `cookbook import` (Node sandbox, functions recovered as data), `cookbook export
--format sglang-jsx`, the round trips, and `cookbook check` on a module. Pages are our own, in the docs' shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hybridplan.cli import app
from hybridplan.cookbook.docs.export import export_jsx
from hybridplan.cookbook.docs.importer import import_evaluation
from hybridplan.cookbook.docs.node_eval import evaluate_file, evaluate_source
from hybridplan.cookbook.docs.rules import docs_rules, literal_rules
from hybridplan.cookbook.docs.view import DocsPage
from hybridplan.cookbook.matrix import selection_space
from hybridplan.cookbook.pages import bundled_ids, load_page
from hybridplan.cookbook.render import render
from hybridplan.cookbook.validate import check_paths
from hybridplan.errors import BadInput

PAGES = Path(__file__).parent / "docs_pages"
TOYS = sorted(PAGES.glob("toy_*.jsx"))
runner = CliRunner()


@pytest.fixture(scope="module")
def toy():
    return import_evaluation(evaluate_file(PAGES / "toy_hybrid.jsx"), "toy")


@pytest.mark.parametrize("path", TOYS, ids=lambda p: p.stem)
def test_import_is_exact_and_export_round_trips_through_node(path):
    ev = evaluate_file(path)
    imp = import_evaluation(ev)
    assert imp.exact, imp.findings
    assert imp.compared == len(DocsPage.of(ev).observations()) > 0
    back = evaluate_source(export_jsx(imp.page), "exported.jsx")
    assert docs_rules(back) == docs_rules(ev)  # the module's own functions come back as they were
    want, got = DocsPage.of(ev).observations(), DocsPage.of(back).observations()
    assert want.keys() == got.keys()
    for p in want:
        assert got[p] == want[p], DocsPage.of(ev).docs_sel(p)


def test_recovered_rules_render_the_modules_commands(toy):
    page = toy.page
    out = render(page, {"hw": "rtx5090", "quant": "nvfp4-fp4-head", "spec": "mtp", "ssm-dtype": "bfloat16"},
                 pin_ratio=False)
    assert "--mem-fraction-static 0.91" in out.flags and "--mem-fraction-static 0.9" not in out.flags
    assert "--enable-linear-replayssm-spec" in out.flags and out.model_name == "toy/Toy-Hybrid-8B-NVFP4-5090"
    assert out.hints == ("bf16 state under speculation: watch the accept length",)
    assert out.badge == "unverified" and out.docker_image == "lmsysorg/sglang:blackwell"
    h200 = render(page, {"hw": "h200", "spec": "mtp"}, pin_ratio=False)
    assert "--enable-linear-replayssm-spec" not in h200.flags and "--mem-fraction-static 0.85" in h200.flags
    assert render(page, {"hw": "h200", "spec": "draft"}, pin_ratio=False).badge == "in-progress"
    b200 = render(page, {"hw": "b200", "spec": "draft", "ssm-dtype": "bfloat16"}, pin_ratio=False)
    assert b200.badge == "unverified"  # verificationStatus returned a state
    assert render(page, {"hw": "b200", "spec": "draft"}, pin_ratio=False).badge == "verified"  # undefined: verified
    draft = page.dimension("spec").option("draft")
    assert draft.disabled_reason({"hw": "rtx5090", "quant": "nvfp4-dense-head", "ssm-dtype": "float32"}) == \
        "Not supported for current selection"  # the docs' tooltip when no disableReason is given
    assert render(page, {"hw": "rtx5090", "quant": "nvfp4-dense-head", "spec": "draft", "ssm-dtype": "bfloat16"},
                  pin_ratio=False).env == ("TOY_SINGLE=1",)  # a helper reading the module's own cells


def test_recovered_conditions_are_small_and_data(toy):
    draft = toy.data["overlay_dims"][0]["options"][2]
    # the function read on every selection (not only those with a cell): the docs' default tooltip, no JavaScript
    assert draft["disabled"] == [{"when": {"equals": {"hw": "rtx5090", "quant": "nvfp4-dense-head",
                                                      "ssm-dtype": "float32"}},
                                  "reason": "Not supported for current selection"}]
    assert draft["env"] == [{"when": {"equals": {"hw": "rtx5090"}}, "then": ["TOY_SINGLE=1"]}]
    names = {r["value"] for r in toy.data["model_names"]}
    assert names == {"toy/Toy-Hybrid-8B", "toy/Toy-Hybrid-8B-NVFP4-Dense", "toy/Toy-Hybrid-8B-NVFP4-5090",
                     "toy/Toy-Hybrid-8B-NVFP4"}
    assert "ssm-dtype" in [d["id"] for d in toy.data["overlay_dims"]]


@pytest.mark.parametrize("pid", bundled_ids())
def test_bundled_page_survives_export_then_import(pid):
    q = load_page(pid)
    module = export_jsx(q)
    ev = evaluate_source(module, f"{pid}.jsx")
    assert docs_rules(ev) == []
    imp = import_evaluation(ev)
    assert imp.exact, imp.findings
    for sel in selection_space(q):
        a = render(q, sel, pin_ratio=False).as_dict()
        b = render(imp.page, sel, pin_ratio=False).as_dict()
        a["cell"], b["cell"] = a["cell"] and a["cell"]["match"], b["cell"] and b["cell"]["match"]
        assert a == b, sel


@pytest.mark.parametrize("text, rule", [
    ("export const config = { a: [...[1]], cells: [] };", "spread"),
    ("export const config = { a: String(1), cells: [] };", "call"),
    ("export const config = { a: (() => 1)(), cells: [] };", "call"),
    ("export const config = { cells: [] };\nexport const other = {};", "single"),
])
def test_literal_rules_catch_data_level_code(text, rule):
    found = literal_rules(evaluate_source(text, "x.jsx"))
    assert any(rule in f for f in found), found


def test_literal_rules_allow_code_inside_functions():
    text = 'export const config = { f: (s) => [...(s.hw ? [String(s.hw)] : [])], cells: [] };'
    assert literal_rules(evaluate_source(text, "x.jsx")) == []


@pytest.mark.parametrize("text, words", [
    ("export const config = { a: (() => { while (true) {} })() };", "timed out"),
    ("const fs = await import('node:fs'); export const config = {};", "import"),
    ("import fs from 'node:fs'; export const config = {};", "may not import"),
    ("export const config = { a: process.env };", "process is not defined"),
    ("export const config = { a: eval('1') };", "Code generation from strings disallowed"),
    ("export const notconfig = {};", "no `export const config`"),
])
def test_the_sandbox_refuses(text, words, monkeypatch):
    from hybridplan.cookbook.docs import node_eval

    monkeypatch.setattr(node_eval, "EVAL_MS", 500)  # the vm's time limit, shortened so the endless loop ends soon
    node_eval.node_command.cache_clear()
    try:
        with pytest.raises(BadInput, match=words):
            evaluate_source(text, "x.jsx")
    finally:
        node_eval.node_command.cache_clear()


def test_too_many_selections_are_refused():
    opts = ", ".join(f'{{ id: "o{i}", label: "o" }}' for i in range(30))
    dims = ", ".join(f'{{ id: "d{k}", title: "d", options: [{opts}] }}' for k in range(3))
    with pytest.raises(BadInput, match="over the bound of 20000"):
        evaluate_source(f'export const config = {{ supportedHardware: ["h200"], matchDims: [{dims}] }};', "x.jsx")


def test_what_cannot_be_expressed_is_listed_and_exits_1(tmp_path):
    src = (PAGES / "toy_legacy.jsx").read_text().replace(
        'flags: ["--model-path {{MODEL_NAME}}", "--tp-size 4"]', 'flags: (sel) => ["--tp-size " + sel.hw.length]')
    page = tmp_path / "fn_cell.jsx"
    page.write_text(src)
    res = runner.invoke(app, ["cookbook", "import", str(page), "--json"])
    assert res.exit_code == 1
    body = json.loads(res.stdout)
    assert not body["exact"] and any("cells.2.flags" in f for f in body["findings"])


def test_cli_import_writes_a_page_that_loads(tmp_path):
    out = tmp_path / "toy.yaml"
    res = runner.invoke(app, ["cookbook", "import", str(PAGES / "toy_hybrid.jsx"), "--out", str(out), "--id", "toy"])
    assert res.exit_code == 0, res.output
    page = load_page(str(out))
    assert page.id == "toy" and len(page.cells) == 4 and page.program == "sglang serve"


def test_cli_export_jsx_writes_a_module(tmp_path):
    out = tmp_path / "q.jsx"
    res = runner.invoke(app, ["cookbook", "export", "qwen3.8-27b", "--format", "sglang-jsx", "--out", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert text.count("export const config = {") == 1 and "ssmDtype" in text
    assert runner.invoke(app, ["cookbook", "export", "qwen3.8-27b", "--format", "tsx"]).exit_code == 2


def test_check_on_a_module_runs_docs_rules_and_the_engine_model(tmp_path):
    src = (PAGES / "toy_legacy.jsx").read_text()
    clean = check_paths([str(PAGES / "toy_legacy.jsx")], gpu=False)
    assert not [f for f in clean.findings if f.rule.startswith("docs-")]
    broken = src.replace('"--tp-size 4"]', '"--tp-size 4", "--not-an-engine-flag 1"]').replace(
        'strategies: [{ id: "balanced", label: "Balanced" }],', "")
    page = tmp_path / "broken.jsx"
    page.write_text(broken)
    report = check_paths([str(page)], gpu=False)
    rules = {f.rule for f in report.findings}
    assert "docs-structure" in rules  # the legacy set is incomplete
    assert any("--not-an-engine-flag" in f.message for f in report.findings)  # the engine version rejects it
    assert report.exit_code == 1
    assert check_paths([str(tmp_path / "missing.jsx")]).exit_code == 2


def test_export_writes_lookup_tables_at_the_coarsest_rung():
    """The exported modelNames/dockerImages are the module's own tables: one key per card or quant where the value
    does not vary below it, a finer key only for the exception, and never an `undefined` segment for a dim the page
    lacks (the export used to write one `hw|quant|strategy` key per selection)."""
    ev = evaluate_file(PAGES / "toy_lookups.jsx")
    page = import_evaluation(ev).page
    back = evaluate_source(export_jsx(page.model_copy(update={"docs": None})), "exported.jsx")  # written afresh
    assert back.data["dockerImages"] == ev.data["dockerImages"] == {
        "h200": "toy/img:hopper", "b200": "toy/img:blackwell", "b200|nvfp4": "toy/img:fp4",
        "toycard": "toy/img:card"}
    assert back.data["modelNames"] == ev.data["modelNames"]
    assert DocsPage.of(back).observations() == DocsPage.of(ev).observations()


def test_what_the_import_carries_without_modelling_is_listed():
    imp = import_evaluation(evaluate_file(PAGES / "toy_lookups.jsx"))
    assert imp.exact
    assert imp.data["docs"]["carried"] == ["hardware[toycard].vram", "cells[3].pipelineFolds"]
    assert any(n.startswith("carried verbatim, not modelled") and "cells[3].pipelineFolds" in n for n in imp.notes)
