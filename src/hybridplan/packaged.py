"""The YAML files the package ships (data/*.yaml, the bundled pages) as plain data: parsed by libyaml when PyYAML
has it (the pure-Python parser costs ~10 ms a file at start-up). User YAML is not read here: cookbook.source bounds
its aliases, nesting and size first."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


def plain_yaml(text: str) -> Any:
    """Shipped YAML text as plain data."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def data_text(name: str) -> str:
    """data/<name> as text (a shipped table read whole)."""
    from importlib import resources

    return (resources.files("hybridplan") / "data" / name).read_text()


@lru_cache(maxsize=None)
def data_yaml(name: str) -> Any:
    """data/<name> as plain data, parsed once per process (several tables read the same file: gpus.yaml holds the
    cards and the driver's reserve); the result is shared, so callers read it and never change it."""
    return plain_yaml(data_text(name))
