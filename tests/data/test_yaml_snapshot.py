"""The shipped YAML tables' snapshot (data/yaml_tables.json, what the package reads at start-up) is every data/*.yaml
as parsed: a table edited without re-running scripts/snapshot_data.py fails here, naming it."""

from __future__ import annotations

import json
import runpy
from importlib import resources
from pathlib import Path

import pytest

from hybridplan.packaged import SNAPSHOT, data_yaml

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = json.loads((resources.files("hybridplan") / "data" / SNAPSHOT).read_text())
DERIVED = runpy.run_path(str(ROOT / "scripts" / "snapshot_data.py"))["documents"]()


def test_the_snapshot_holds_every_table_and_nothing_else():
    assert sorted(SHIPPED) == sorted(DERIVED) and "gpus.yaml" in SHIPPED and len(SHIPPED) >= 10


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_each_table_is_its_file_as_parsed(name):
    assert SHIPPED[name] == DERIVED[name], f"data/{name} changed: run scripts/snapshot_data.py"


def test_a_table_the_snapshot_lacks_names_the_script():
    with pytest.raises(KeyError, match="run scripts/snapshot_data.py"):
        data_yaml("no_such_table.yaml")
