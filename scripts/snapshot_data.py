"""Write data/yaml_tables.json: every data/*.yaml as its parsed document, which the package reads at start-up instead
of parsing the YAML (hybridplan.packaged). Run it after editing any data/*.yaml; tests/data/test_yaml_snapshot.py fails
until the snapshot matches the files again.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path


def documents() -> dict[str, object]:
    """Every shipped YAML table, by file name, parsed as the package parses shipped YAML."""
    from hybridplan.packaged import plain_yaml

    data = Path(str(resources.files("hybridplan") / "data"))
    return {p.name: plain_yaml(p.read_text()) for p in sorted(data.glob("*.yaml"))}


def main() -> int:
    from hybridplan.packaged import SNAPSHOT

    docs = documents()
    out = Path(str(resources.files("hybridplan") / "data" / SNAPSHOT))
    out.write_text(json.dumps(docs, indent=1, sort_keys=False) + "\n")
    print(f"{len(docs)} tables -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
