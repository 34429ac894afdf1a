"""The files the package ships (data/*): the tables, and the YAML ones as plain data. A verdict reads several YAML
tables at start-up, and importing PyYAML and parsing them cost a tenth of a cold `explain`, so their parsed form ships
beside them as one JSON snapshot (data/yaml_tables.json, written by scripts/snapshot_data.py; tests/data hold it equal
to the YAML files, which stay the source of truth). User YAML is not read here: cookbook.source bounds its aliases,
nesting and size first."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

SNAPSHOT = "yaml_tables.json"  # in hybridplan/data: {file name: its parsed document}


def plain_yaml(text: str) -> Any:
    """Shipped YAML text as plain data (libyaml when PyYAML has it)."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def data_text(name: str) -> str:
    """data/<name> as text (a shipped table read whole)."""
    from importlib import resources

    return (resources.files("hybridplan") / "data" / name).read_text()


@lru_cache(maxsize=1)
def _snapshot() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(data_text(SNAPSHOT))
    return data


def data_yaml(name: str) -> Any:
    """data/<name> (a YAML table) as plain data, from the snapshot; shared, so callers read it and never change it."""
    try:
        return _snapshot()[name]
    except KeyError:
        raise KeyError(f"data/{name} is not in data/{SNAPSHOT}: run scripts/snapshot_data.py") from None
