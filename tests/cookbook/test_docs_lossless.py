"""`cookbook import` -> page YAML -> `cookbook export --format sglang-jsx` gives the module back: every field (what
hybridplan models, and what it carries verbatim: helpers, rule tables, Playground features, captions, row strips),
in the module's own shape and text; a changed page field is written afresh and nothing else moves. A construct the
importer cannot keep is refused by name. `cookbook check` reports every finding of every cell (an unknown flag is
set aside, not a stop), as GitHub annotations too, and over a whole docs tree. Pages are our own, in the docs' shape.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from hybridplan.cli import app
from hybridplan.cookbook.docs.export import export_jsx
from hybridplan.cookbook.docs.importer import import_evaluation
from hybridplan.cookbook.docs.keep import PRIVATE, PRIVATE_NOTE
from hybridplan.cookbook.docs.literal import Refused
from hybridplan.cookbook.docs.node_eval import evaluate_file, evaluate_source
from hybridplan.cookbook.docs.view import DocsPage
from hybridplan.cookbook.pages import load_page, read_page_text
from hybridplan.cookbook.render import render
from hybridplan.cookbook.validate import Finding, Report, check_paths

PAGES = Path(__file__).parent / "docs_pages"
MODULES = sorted(PAGES.glob("*.jsx"))
runner = CliRunner()


def _through_yaml(path: Path):
    """Import, write the page YAML, read it back (what a maintainer's `import --out` then `export` does)."""
    ev = evaluate_file(path)
    imp = import_evaluation(ev)
    assert imp.exact, imp.findings
    return ev, read_page_text(imp.yaml(), f"{path.stem}.yaml").page


def _without_private(text: str) -> list[str]:
    """The module's lines without what hybridplan adds: its key's note and the key, down to the line closing it."""
    note = {line.strip() for line in PRIVATE_NOTE.splitlines()}
    out: list[str] = []
    close = None
    for line in text.splitlines():
        if close is not None:
            close = None if line == close else close
            continue
        if line.strip() in note:
            continue
        if line.lstrip().startswith(f"{PRIVATE}:"):
            close = line[:len(line) - len(line.lstrip())] + "}," if line.endswith("{") else None
            continue
        out.append(line)
    return out


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_export_of_an_import_is_the_module_itself(path):
    ev, page = _through_yaml(path)
    text = export_jsx(page)
    assert _without_private(text) == _without_private(path.read_text())  # comments and layout included
    back = evaluate_source(text, "exported.jsx")
    assert {k: v for k, v in back.data.items() if k != PRIVATE} == {k: v for k, v in ev.data.items() if k != PRIVATE}
    assert DocsPage.of(back).observations() == DocsPage.of(ev).observations()


@pytest.fixture(scope="module")
def helpers():
    return _through_yaml(PAGES / "toy_helpers.jsx")


def test_the_page_yaml_lists_what_it_carries_without_modelling(helpers):
    _, page = helpers
    assert page.docs.carried == ["cellFor", "flagOf", "sizeOf", "isPipelined", "pipelinedRules", "accuracyLabels",
                                 "github", "showPlaygroundLink", "playgroundFeatures",
                                 "overlayDims[spec].stripPrefixes", "cells[1].foldsPipeline"]
    kept = {p.key: p for p in page.docs.props}
    assert kept["accuracyLabels"].of is None and "gsm8k_pct" in kept["accuracyLabels"].text
    assert kept["cellFor"].text.strip().startswith("// ---- helpers read through `config`")
    assert kept["cells"].of == "cells" and len(kept["cells"].items) == 4
    folds = next(f for f in kept["cells"].items[1].items if f.key == "foldsPipeline")
    assert folds.of is None and folds.text.strip() == "foldsPipeline: false"  # a cell key only helpers read


def test_a_card_the_import_adds_for_itself_is_not_exported(helpers):
    """`npux` is in neither hardware list: the page declares it for hybridplan's schema; the module had no such
    entry, and the export adds none."""
    ev, page = helpers
    assert "npux" in {h.id for h in page.hardware}
    assert "hardware" not in ev.data
    assert "hardware" not in evaluate_source(export_jsx(page), "exported.jsx").data


def _edited(page, i: int, **update):
    cells = list(page.cells)
    cells[i] = cells[i].model_copy(update=update)
    return page.model_validate({**page.model_dump(by_alias=True, exclude_none=True),
                                "cells": [c.model_dump(by_alias=True, exclude_none=True) for c in cells]})


def _changed_lines(a: str, b: str) -> list[str]:
    return [d for d in difflib.unified_diff(_without_private(a), _without_private(b), lineterm="", n=0)
            if d[:1] in "+-" and not d.startswith(("+++", "---"))]


def test_a_changed_cell_is_written_afresh_and_nothing_else_moves(helpers):
    ev, page = helpers
    cells = list(page.cells)
    cells[1] = cells[1].model_copy(update={"flags": [f.replace("0.85", "0.8") for f in cells[1].flags]})
    edited = _edited(page, 1, flags=cells[1].flags)
    text = export_jsx(edited)
    back = evaluate_source(text, "edited.jsx")
    assert "--mem-fraction-static 0.8" in back.data["cells"][1]["flags"]
    assert back.data["cells"][1]["foldsPipeline"] is False  # the module's own cell key rides along
    for k, v in ev.data.items():
        if k not in ("cells", PRIVATE):
            assert back.data[k] == v, k  # helpers, getters, Playground features: as they were
    assert [c for i, c in enumerate(back.data["cells"]) if i != 1] == [c for i, c in enumerate(ev.data["cells"])
                                                                        if i != 1]
    again = import_evaluation(back)
    assert again.exact, again.findings
    assert again.page.cells[1].flags == cells[1].flags


def test_a_retuned_pin_is_a_one_line_diff_and_a_new_warning_one_more(helpers):
    """Only the changed property of a cell is written afresh, in place: a maintainer's review sees the pin."""
    _, page = helpers
    original = (PAGES / "toy_helpers.jsx").read_text()
    flags = [f.replace("--tp-size 16", "--tp-size 8") for f in page.cells[3].flags]
    assert _changed_lines(original, export_jsx(_edited(page, 3, flags=flags))) == [
        '-      flags: ["--model-path {{MODEL_NAME}}", "--tp-size 16", "--host {{HOST_IP}}", "--port {{PORT}}"],',
        '+      flags: [', '+        "--model-path {{MODEL_NAME}}",', '+        "--tp-size 8",',
        '+        "--host {{HOST_IP}}",', '+        "--port {{PORT}}",', '+      ],']
    warned = export_jsx(_edited(page, 0, warn="Eight ranks."))
    assert _changed_lines(original, warned) == ['+      warn: "Eight ranks.",']
    assert evaluate_source(warned, "warned.jsx").data["cells"][0]["warn"] == "Eight ranks."


def test_a_retuned_option_pin_rewrites_only_that_options_flags():
    """The 1cf2b8c retune as a page edit: the DFLASH2 option's fp32 pin 0.945 -> 0.895. Only that option's `flags`
    is written afresh (as a condition over the selection); its other properties, the other options and rows, the
    cells and everything carried stay the module's own text."""
    ev, page = _through_yaml(PAGES / "qwen_pre_retune.jsx")
    data = page.model_dump(by_alias=True, exclude_none=True, mode="json")
    dims = json.dumps(data["overlay_dims"])
    assert dims.count("--mem-fraction-static 0.945") == 1
    data["overlay_dims"] = json.loads(dims.replace("--mem-fraction-static 0.945", "--mem-fraction-static 0.895"))
    text = export_jsx(page.model_validate(data))
    changed = _changed_lines((PAGES / "qwen_pre_retune.jsx").read_text(), text)
    added = [c for c in changed if c.startswith("+")]
    assert len(added) == 1 and added[0].startswith("+          flags: (sel) => [") and "0.895" in added[0]
    assert all("0.945" in c or "DFLASH" in c or "draft-tokens" in c or c.strip() in ("-          flags: (sel) => [",
                                                                                    "-          ],")
               for c in changed if c.startswith("-"))
    again = import_evaluation(evaluate_source(text, "retuned.jsx"))
    assert again.exact, again.findings
    sel = {"hw": "rtx5090", "spec": "dflash", "tier": "high-throughput", "ssm-dtype": "float32"}
    assert "--mem-fraction-static 0.895" in render(again.page, sel, pin_ratio=False).flags


def test_legacy_rows_keep_the_docs_titles():
    _, page = _through_yaml(PAGES / "toy_legacy.jsx")
    assert [d.title for d in page.match_dims] == ["Model Variant", "Quantization", "Strategy", "Nodes"]


def test_a_page_changed_on_a_legacy_row_is_written_with_match_dims():
    ev, page = _through_yaml(PAGES / "toy_legacy.jsx")
    dims = [d.model_dump(by_alias=True, exclude_none=True) for d in page.match_dims]
    dims[1]["options"][0]["label"] = "BF16 (reference)"
    edited = page.model_validate({**page.model_dump(by_alias=True, exclude_none=True), "match_dims": dims})
    back = evaluate_source(export_jsx(edited), "edited.jsx")
    assert [d["title"] for d in back.data["matchDims"]] == ["Model Variant", "Quantization", "Strategy", "Nodes"]
    assert not {"variants", "quantizations", "strategies", "nodesOptions"} & set(back.data)
    assert back.data["matchDims"][1]["options"][0]["label"] == "BF16 (reference)"
    assert back.data["cells"] == ev.data["cells"]


BASE = (PAGES / "toy_helpers.jsx").read_text()


@pytest.mark.parametrize("old, new, named", [
    ('  modelName: "Toy-Helpers",', '  modelName: "Toy-Helpers",\n  ...{ extra: 1 },', "a spread"),
    ('label: "Low-Latency"', 'label: String("Low-Latency")', "a name, call or expression"),
    ('label: "Low-Latency"', 'label: "Low-" + 1', "an expression (only string literals may be joined"),
    ('export const config = {', 'const BASE = ["--tp-size 8"];\nexport const config = {',
     "code outside the single `export const config` literal"),
    ('  github: {', '  ["git" + "hub"]: 1,\n  github: {', "a computed key"),
    ('  showPlaygroundLink: true,', '  showPlaygroundLink: true,\n  pattern: /--tp-size \\d+/,',
     "a value that is not plain data (RegExp)"),
    ('  github: {', '  when: new Date(0),\n  github: {', "a value that is not plain data (Date)"),
    ('default: "30000" },\n    CURL_HOST', 'default: `${30000}` },\n    CURL_HOST', "a template string with an expression"),
])
def test_a_construct_the_importer_cannot_keep_is_refused_by_name(tmp_path, old, new, named):
    assert BASE.count(old) == 1
    module = tmp_path / "m.jsx"
    module.write_text(BASE.replace(old, new))
    with pytest.raises(Refused, match="cannot keep " + named.replace("(", r"\(").replace(")", r"\)")):
        import_evaluation(evaluate_file(module))
    out = tmp_path / "m.yaml"
    res = runner.invoke(app, ["cookbook", "import", str(module), "--out", str(out)])
    assert res.exit_code == 2 and "cannot keep" in res.output and not out.exists()  # nothing half-imported


def test_cli_import_then_export_gives_the_module_back(tmp_path):
    page, out = tmp_path / "p.yaml", tmp_path / "p.jsx"
    assert runner.invoke(app, ["cookbook", "import", str(PAGES / "toy_helpers.jsx"), "--out", str(page)]).exit_code == 0
    carried = yaml.safe_load(page.read_text())["docs"]["carried"]
    assert "playgroundFeatures" in carried and "pipelinedRules" in carried
    assert load_page(str(page)).docs is not None
    res = runner.invoke(app, ["cookbook", "export", str(page), "--format", "sglang-jsx", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert _without_private(out.read_text()) == _without_private((PAGES / "toy_helpers.jsx").read_text())


# ---------------------------------------------------------------------------------------------- the linter

PRE = PAGES / "qwen_pre_retune.jsx"


def _with_unknown_cell_flag(tmp_path) -> Path:
    """The pre-retune page with a flag 0.5.23 does not know added to its one cell."""
    text = PRE.read_text()
    old = '"--mem-fraction-static 0.9",'
    assert text.count(old) == 1
    module = tmp_path / "qwen_unknown.jsx"
    module.write_text(text.replace(old, old + ' "--cuda-graph-max-bs-old 16",'))
    return module


def test_an_unknown_flag_is_an_error_and_the_cell_is_still_sized(tmp_path):
    report = check_paths([str(_with_unknown_cell_flag(tmp_path))])
    unknown = [f for f in report.findings if f.rule == "flag-unknown"]
    assert [f.severity for f in unknown] == ["error"] and "--cuda-graph-max-bs-old" in unknown[0].message
    aside = [f for f in report.findings if f.rule == "flag-set-aside"]
    assert len(aside) == 1 and "--cuda-graph-max-bs-old 16 set aside" in aside[0].message
    assert aside[0].line == unknown[0].line - 0 or aside[0].line is not None
    pins = [f for f in report.findings if f.rule == "pin-fit"]
    # both DFLASH2 pins the retune replaced are still named: fp32 (0.945) and bf16 (0.90)
    assert {(f.selection["spec"], f.selection["ssm-dtype"]) for f in pins} == {("dflash", "float32"),
                                                                                ("dflash", "bfloat16")}
    assert report.exit_code == 1


def test_findings_carry_the_modules_line(tmp_path):
    module = _with_unknown_cell_flag(tmp_path)
    report = check_paths([str(module)])
    lines = module.read_text().splitlines()
    unknown = next(f for f in report.findings if f.rule == "flag-unknown")
    assert "--cuda-graph-max-bs-old 16" in lines[unknown.line - 1]
    pin = next(f for f in report.findings if f.rule == "pin-fit")
    assert lines[pin.line - 1].lstrip().startswith("{ match:")  # the cell the pin is on


def test_check_format_github_annotates_file_and_line(tmp_path):
    module = _with_unknown_cell_flag(tmp_path)
    res = runner.invoke(app, ["cookbook", "check", str(module), "--format", "github"])
    assert res.exit_code == 1
    annotations = [line for line in res.output.splitlines() if line.startswith("::")]
    assert any(a.startswith("::error file=") and ",line=" in a and "title=flag-unknown::" in a for a in annotations)
    assert any(a.startswith("::notice ") and "title=flag-set-aside::" in a for a in annotations)
    assert sum("title=pin-fit::" in a for a in annotations) == 2
    assert runner.invoke(app, ["cookbook", "check", str(module), "--format", "sarif"]).exit_code == 2


def _docs_tree(root: Path, modules: list[Path]) -> Path:
    configs = root / "docs" / "src" / "snippets" / "configs"
    for m in modules:
        org = configs / ("Qwen" if "qwen" in m.stem else "Toy")
        org.mkdir(parents=True, exist_ok=True)
        (org / m.name).write_text(m.read_text())
    (configs / "_deployment.jsx").write_text("export const HARDWARE_CATALOG = [];\n")  # the engine, not a config
    (configs / "Toy" / "toy_hybrid-benchmarks.jsx").write_text("export const benchmarks = {};\n")
    return root / "docs"


def test_check_docs_checks_every_config_module_of_a_tree(tmp_path):
    docs = _docs_tree(tmp_path, [PRE, PAGES / "toy_helpers.jsx", PAGES / "toy_legacy.jsx"])
    res = runner.invoke(app, ["cookbook", "check", "--docs", str(docs)])
    assert res.exit_code == 1  # the pre-retune pins
    out = res.output.splitlines()
    pages = [line for line in out if line.split()[:1] in (["ok"], ["warn"], ["FAIL"], ["unreadable"])]
    assert [p.split()[1].split("/configs/")[1].rstrip(":") for p in pages] == [
        "Qwen/qwen_pre_retune.jsx", "Toy/toy_helpers.jsx", "Toy/toy_legacy.jsx"]
    assert pages[0].startswith("FAIL") and "2 error" in pages[0]
    assert out[-1].startswith("3 page(s): ")
    as_json = runner.invoke(app, ["cookbook", "check", "--docs", str(docs), "--json"])
    assert len(__import__("json").loads(as_json.output)["pages"]) == 3


def test_check_docs_a_module_that_cannot_be_kept_is_an_error_line(tmp_path):
    docs = _docs_tree(tmp_path, [PAGES / "toy_helpers.jsx"])
    bad = docs / "src" / "snippets" / "configs" / "Toy" / "spread.jsx"
    bad.write_text(BASE.replace('  modelName: "Toy-Helpers",', '  modelName: "Toy-Helpers",\n  ...{ a: 1 },'))
    res = runner.invoke(app, ["cookbook", "check", "--docs", str(docs), "--format", "github"])
    assert res.exit_code == 1
    assert any(line.startswith("::error file=") and "cannot keep a spread" in line for line in res.output.splitlines())
    assert runner.invoke(app, ["cookbook", "check", "--docs", str(tmp_path / "nowhere")]).exit_code == 2


def test_check_docs_fails_on_errors_only():
    """Over a docs tree warnings are reported but do not fail the job; any error, an unreadable module included,
    does. A single page keeps `check`'s own codes (1 on any finding, 2 unreadable)."""
    warned = Finding("warning", "cell-flags", "no --host", "a.jsx", 3)
    wrong = Finding("error", "flag-unknown", "--old", "a.jsx", 4)
    assert Report(["a.jsx"], [warned], docs=True).exit_code == 0
    assert Report(["a.jsx"], [warned, wrong], docs=True).exit_code == 1
    assert Report(["a.jsx"], [], ["a.jsx"], docs=True).exit_code == 1
    assert Report(["a.jsx"], [warned]).exit_code == 1
    assert Report(["a.jsx"], [], ["a.jsx"]).exit_code == 2
