"""A bundled page and its docs-module export are one page: `cookbook check` says the same of both, finding for
finding (file and line aside), because what the docs format has no key for (a cell's known refusals and their
reasons, the badge's build and measurements, the page's provenance and release) travels in the `hybridplan` keys;
and what the export adds is laid out one value per line, as the module around it."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from hybridplan.cookbook.docs.export import export_jsx
from hybridplan.cookbook.docs.importer import import_evaluation
from hybridplan.cookbook.docs.keep import PRIVATE
from hybridplan.cookbook.docs.node_eval import evaluate_source
from hybridplan.cookbook.pages import bundled_ids, load_page
from hybridplan.cookbook.validate import Finding, check_paths


def _said(f: Finding) -> tuple[str, str, str, str]:
    return f.severity, f.rule, f.message, json.dumps(f.selection, sort_keys=True)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("exported")
    out = {}
    for page_id in bundled_ids():
        out[page_id] = root / f"{page_id}.jsx"
        out[page_id].write_text(export_jsx(load_page(page_id)))
    return out


@pytest.fixture(scope="module")
def checked(exported):
    """`cookbook check` on each export, once."""
    return {page_id: check_paths([str(path)]).findings for page_id, path in exported.items()}


@pytest.mark.parametrize("page_id", bundled_ids())
def test_check_says_of_the_export_what_it_says_of_the_page(exported, checked, page_id):
    page = Counter(_said(f) for f in check_paths([page_id]).findings)
    assert Counter(_said(f) for f in checked[page_id]) == page
    assert all(f.origin == str(exported[page_id]) for f in checked[page_id])


def test_kimi_k3_export_keeps_its_known_refusals_as_info(checked):
    """The symptom: the page checked clean while its export gave 34 errors (the NVFP4 checkpoint, the A3 card and
    the removed --cuda-graph-max-bs / --cuda-graph-bs pins, each a refusal the page records with its reason)."""
    findings = checked["kimi-k3"]
    assert not [f for f in findings if f.severity == "error"]
    refusals = [f for f in findings if f.message.startswith("known refusal")]
    assert len(refusals) == 34 and {f.severity for f in refusals} == {"info"}


def test_a_cells_known_refusals_round_trip_through_the_module():
    page = load_page("kimi-k3")
    back = import_evaluation(evaluate_source(export_jsx(page), "kimi-k3.jsx"))
    assert back.page is not None
    assert [c.known_refused for c in back.page.cells] == [c.known_refused for c in page.cells]
    assert [c.verification for c in back.page.cells] == [c.verification for c in page.cells]
    assert sum(bool(c.known_refused) for c in page.cells) > 20


_STRING = re.compile(r"""^\s*(?:[\w$]+: )?(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'),?$""")


@pytest.mark.parametrize("page_id", bundled_ids())
def test_what_the_export_adds_is_one_value_per_line(exported, page_id):
    """Every line of the `hybridplan` keys fits prettier's 80 columns, unless it is one string literal alone (a
    string is never split); each key opens on its own line when its value does not fit there."""
    lines = exported[page_id].read_text().splitlines()
    opened = [i for i, line in enumerate(lines) if line.lstrip().startswith(f"{PRIVATE}:")]
    assert opened
    for i in opened:
        indent = len(lines[i]) - len(lines[i].lstrip())
        block = [lines[i]]
        if lines[i].endswith("{"):
            end = lines.index(" " * indent + "},", i)
            block = lines[i:end + 1]
        assert all(len(line) <= 80 or _STRING.match(line) for line in block), page_id
