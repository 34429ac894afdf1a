"""docs/architecture.md names real places: every file path it cites exists (in the repo or under src/hybridplan)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PATH = re.compile(r"`([\w./-]+\.(?:py|yaml|json|md|txt|sh))(?:::\w+)?`")


def _exists(rel: str) -> bool:
    return any((base / rel).exists() for base in (ROOT, ROOT / "src" / "hybridplan"))


def test_every_cited_file_exists():
    cited = set(PATH.findall(DOC.read_text()))
    assert len(cited) >= 15
    assert sorted(p for p in cited if not _exists(p)) == []


def test_the_diagram_names_every_layer_package():
    text = DOC.read_text()
    packages = sorted(p.name for p in (ROOT / "src" / "hybridplan").iterdir() if (p / "__init__.py").exists()
                      and p.name not in ("conformance", "data"))
    assert [p for p in packages if f"{p}/" not in text] == []
