"""Cookbook YAML: a safe loader that bounds aliases, nesting and the alias-expanded size; bounded page files."""

from __future__ import annotations

import os

import pytest
from hardening_support import PEAK_BOUND, measure

from hybridplan.cookbook.source import Unreadable
from hybridplan.limits import MAX_YAML_BYTES


def _laughs(levels: int, fan: int = 10) -> str:
    """The billion-laughs document: each level lists `fan` aliases of the one before."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * fan) + "]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused_cheaply(refused, tmp_path):
    from hybridplan.cookbook.pages import read_page_text

    peak, raised = measure(lambda: read_page_text(_laughs(9), "laughs.yaml"))
    assert isinstance(raised, Unreadable) and "once aliases are expanded" in raised.message and peak < PEAK_BOUND
    page = tmp_path / "laughs.yaml"
    page.write_text(_laughs(9))
    refused(["cookbook", "render", str(page)], "once aliases are expanded", json_at=2)


def test_too_many_aliases(refused, tmp_path):
    page = tmp_path / "aliases.yaml"
    page.write_text("x: &x 1\ny: [" + ", ".join(["*x"] * 200) + "]\n")
    refused(["cookbook", "render", str(page)], "more than 128 aliases", json_at=2)


def test_deep_nesting(refused, tmp_path):
    page = tmp_path / "deep.yaml"
    page.write_text("a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    refused(["cookbook", "render", str(page)], "nested deeper than 64 levels", json_at=2)


def test_a_few_aliases_still_load():
    from hybridplan.cookbook.source import parse_yaml

    data, _ = parse_yaml(_laughs(2), "ok.yaml")
    assert len(data["l2"]) == 10 and data["l2"][0] == data["l1"] and len(data["l1"][0]) == 10


def test_oversized_page(refused, tmp_path):
    page = tmp_path / "big.yaml"
    with open(page, "wb") as fh:
        fh.truncate(MAX_YAML_BYTES + 1)
    refused(["cookbook", "render", str(page)], "byte bound", json_at=2)


def test_fifo_page_is_not_opened(refused, tmp_path):
    page = tmp_path / "page.yaml"
    os.mkfifo(page)
    refused(["cookbook", "render", str(page)], "not a regular file", json_at=2)


def test_page_that_is_not_utf8(refused, tmp_path):
    page = tmp_path / "page.yaml"
    page.write_bytes(b"id: \xfe\xff\n")
    refused(["cookbook", "render", str(page)], "not UTF-8", json_at=2)


def test_python_tags_are_not_constructed(refused, tmp_path):
    page = tmp_path / "page.yaml"
    page.write_text("id: !!python/object/apply:os.system ['true']\n")
    refused(["cookbook", "render", str(page)], "not valid YAML", json_at=2)


def test_list_valued_matches_are_bounded_before_expansion():
    from importlib import resources

    import yaml

    from hybridplan.cookbook.pages import read_page_text

    text = (resources.files("hybridplan") / "data" / "cookbooks" / "qwen3-next-80b-a3b.yaml").read_text()
    data = yaml.safe_load(text)
    cell = data["cells"][0]
    cell["match"] = {**cell["match"], **{f"d{i}": [f"o{j}" for j in range(20)] for i in range(6)}}
    peak, raised = measure(lambda: read_page_text(yaml.safe_dump(data), "wide.yaml"))
    assert raised is None and peak < PEAK_BOUND
    loaded = read_page_text(yaml.safe_dump(data), "wide.yaml")
    assert loaded.page is None and any("concrete cells, over the bound" in e.message for e in loaded.errors)


def test_cookbook_check_reports_unreadable_pages_as_exit_2(cli, tmp_path):
    page = tmp_path / "laughs.yaml"
    page.write_text(_laughs(9))
    code, out, err = cli("cookbook", "check", str(page))
    assert code == 2 and "once aliases are expanded" in out + err and "Traceback" not in out + err


@pytest.mark.parametrize("key,value,field", [
    ("supported_hardware", 5, "supported_hardware"),
    ("supported_hardware", [[1], {}], "supported_hardware[0]"),
    ("hardware", 7, "supported_hardware[0]"),
    ("hardware", [7], "hardware[4]"),
    ("hardware", [{"id": [1]}], "hardware[4].id"),
])
def test_malformed_hardware_is_a_schema_error(refused, tmp_path, key, value, field):
    # found by test_cookbook_loader_on_mutated_pages: unhashable ids once crashed the hardware merge
    from importlib import resources

    import yaml

    data = yaml.safe_load((resources.files("hybridplan") / "data" / "cookbooks" / "nemotron-nano-9b-v2.yaml").read_text())
    data[key] = value
    page = tmp_path / "page.yaml"
    page.write_text(yaml.safe_dump(data))
    refused(["cookbook", "render", str(page)], field, json_at=2)


@pytest.mark.parametrize("text", ["? {a: 1}\n: 2\n", "{? [1]: 2}\n"])
def test_complex_mapping_keys_are_unreadable(text):
    # found by test_cookbook_loader_on_random_yaml: the duplicate-key check hashed list and mapping keys
    from hybridplan.cookbook.pages import read_page_text

    with pytest.raises(Unreadable, match="a mapping key must be a plain value"):
        read_page_text(text, "keys.yaml")
