"""`cookbook import --merge PAGE.yaml --from REPO@COMMIT --workload LEN,CONC`: a page regenerated from a docs module
keeps its own additions, records the import, and refuses bad input with one line. Pages are our own, in the docs'
shape (tests/cookbook/docs_pages); the bundled pages' docs modules are not in the repo, so only their provenance is
checked here."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
import yaml

from hybridplan import __version__
from hybridplan.cookbook.docs.importer import import_evaluation
from hybridplan.cookbook.docs.merge import provenance
from hybridplan.cookbook.docs.node_eval import evaluate_file
from hybridplan.cookbook.pages import load_page

TOY = Path(__file__).parent / "docs_pages" / "toy_hybrid.jsx"


@pytest.fixture(scope="module")
def ev():
    return evaluate_file(TOY)


@pytest.fixture()
def overlay(ev, tmp_path) -> Path:
    """The toy's own import, then edited the way a maintainer would: additions the docs have no place for, and a
    stale docs-owned value the regeneration must replace."""
    data = import_evaluation(ev, "toy-page").data
    data["description"] = "Toy hybrid, kept by hybridplan."
    data["workload"] = {"request_length": 9216, "concurrency": 8}
    data["overlay_dims"][0]["strip"] = ["--mem-fraction-static"]
    h200 = data["cells"][0]
    h200["note"] = "measured on our own rig"
    h200["verification"]["build"] = "abc1234"
    h200["flags"] = ["--model-path {{MODEL_NAME}}", "--mem-fraction-static 0.5"]  # stale: the module wins
    data["cells"].append({"match": {**h200["match"], "hw": "gb300"}, "flags": ["--model-path x"]})  # gone upstream
    path = tmp_path / "toy-page.yaml"
    path.write_text("# Toy page: regenerated from its docs module.\n" + yaml.safe_dump(data, sort_keys=False))
    return path


def test_merge_keeps_the_pages_own_additions_and_takes_the_rest_from_the_module(ev, overlay):
    imp = import_evaluation(ev, merge=str(overlay), origin="me/docs@0123abc")
    assert imp.exact and imp.page is not None
    page = imp.page
    assert page.id == "toy-page" and page.description == "Toy hybrid, kept by hybridplan."
    assert (page.workload.request_length, page.workload.concurrency) == (9216, 8)
    h200 = page.cells[0]
    assert h200.note == "measured on our own rig" and h200.verification.build == "abc1234"
    assert h200.flags == ["--model-path {{MODEL_NAME}}", "--mem-fraction-static 0.85", "--host {{HOST_IP}}",
                          "--port {{PORT}}"]  # the module's recipe, not the stale overlay's
    assert len(page.cells) == 4 and all(c.match["hw"] != "gb300" for c in page.cells)
    assert any("1 overlay cell(s) match no module cell, dropped" in n for n in imp.notes)
    assert page.overlay_dims[0].strip == ["--mem-fraction-static"]
    # the kept row strip is something the docs' engine ignores, so the merged page is told apart from the module
    assert any(n.startswith("the overlay changes what the panel shows") for n in imp.notes)
    assert imp.yaml().startswith("# Toy page: regenerated from its docs module.\n")
    assert page.source == provenance("me/docs@0123abc", "toy_hybrid.jsx", ev.node, date.today())


def test_provenance_names_repo_commit_path_importer_and_date():
    text = provenance("sgl-project/sglang@00ac710", "docs/src/snippets/configs/Qwen/qwen3.8-27b.jsx", "v20.1.0",
                      date(2026, 12, 3))
    assert text == ("SGLang docs config module sgl-project/sglang@00ac710:docs/src/snippets/configs/Qwen/"
                    f"qwen3.8-27b.jsx, imported by hybridplan {__version__} `cookbook import` (Node v20.1.0) "
                    "on 2026-12-03")


def test_the_bundled_qwen_page_names_its_import():
    page = load_page("qwen3.8-27b")
    assert page.source.startswith("SGLang docs config module sgl-project/sglang@00ac710:"
                                  "docs/src/snippets/configs/Qwen/qwen3.8-27b.jsx, imported by hybridplan ")
    assert "`cookbook import`" in page.source
    # the overlay's measurements survived the regeneration
    assert page.records and page.cells[0].verification.measurements


def test_workload_option_sets_the_calculator_workload(cli, tmp_path):
    out = tmp_path / "toy.yaml"
    code, _, err = cli("cookbook", "import", str(TOY), "--workload", "5120,64", "--out", str(out))
    assert code == 0, err
    assert yaml.safe_load(out.read_text())["workload"] == {"request_length": 5120, "concurrency": 64}
    code, _, err = cli("cookbook", "import", str(TOY), "--out", str(tmp_path / "bare.yaml"))
    assert code == 0 and "no workload" in err and "--workload LENGTH,CONCURRENCY" in err


def test_a_page_with_a_docs_calculator_starts_from_its_workload(cli, tmp_path):
    """The docs' Qwen3.8-27B calculator starts at L=5120, C=64 (outside the module): a module of that page imported
    without --workload is sized as the page first shows it; --workload still wins."""
    module = tmp_path / "qwen.jsx"
    module.write_text((Path(__file__).parent / "docs_pages" / "qwen_pre_retune.jsx").read_text()
                      .replace('modelName: "Qwen3.8-27B pre-retune"', 'modelName: "Qwen3.8-27B"'))
    code, _, err = cli("cookbook", "import", str(module), "--out", str(tmp_path / "a.yaml"))
    assert code == 0, err
    assert "the docs' Qwen3.8-27B calculator starts at L=5120, C=64" in err and "no workload" not in err
    assert yaml.safe_load((tmp_path / "a.yaml").read_text())["workload"] == {"request_length": 5120, "concurrency": 64}
    code, _, err = cli("cookbook", "import", str(module), "--workload", "9216,1", "--out", str(tmp_path / "b.yaml"))
    assert code == 0 and yaml.safe_load((tmp_path / "b.yaml").read_text())["workload"] == {
        "request_length": 9216, "concurrency": 1}


@pytest.mark.parametrize("args, field", [(("--workload", "5120"), "--workload"),
                                         (("--workload", "0,4"), "--workload"),
                                         (("--merge", "/nonexistent/page.yaml"), "page.yaml")])
def test_bad_merge_or_workload_is_one_line_exit_2(cli, args, field):
    code, out, _ = cli("cookbook", "import", str(TOY), *args, "--json")
    assert code == 2
    err = json.loads(out)["error"]
    assert field in err["message"] and "\n" not in err["message"]


def test_a_merge_file_that_is_not_a_page_is_refused(cli, tmp_path):
    bad = tmp_path / "notes.yaml"
    bad.write_text("just: notes\n")
    code, out, _ = cli("cookbook", "import", str(TOY), "--merge", str(bad), "--json")
    assert code == 2 and "not a cookbook page" in json.loads(out)["error"]["message"]


def test_a_merged_page_writes_shared_values_out_so_each_cell_keeps_its_own_lists(ev, overlay):
    data = yaml.safe_load(overlay.read_text())
    shared = [{"protocol": "one run", "source": "our rig"}]
    data["cells"][0]["verification"]["measurements"] = shared
    data["cells"][1].setdefault("verification", {})["measurements"] = shared  # one list object in two cells
    overlay.write_text(yaml.safe_dump(data, sort_keys=False))
    text = import_evaluation(ev, merge=str(overlay), origin="me/docs@0123abc").yaml()
    assert "&id" not in text and "*id" not in text
    cells = yaml.safe_load(text)["cells"]
    cells[0]["verification"]["measurements"].append({"protocol": "another"})
    assert len(cells[1]["verification"]["measurements"]) == 1
