"""Every measured launch a verdict's confidence reads, shipped as one table (data/evidence.json): the bundled pages'
records and measured cells, the public boot logs and every engine's public launch reports, each launch resolved once
by the engine (and release or build) that ran it. Deriving them renders pages, parses the logs and the reports and
resolves every launch, far more than a verdict's start-up can pay, so `scripts/record_evidence.py` writes the table
and tests hold it equal to its sources (tests/cookbook/test_record_evidence.py, tests/verify/test_evidence_table.py).
A verdict reads only the table: no page model, no log or report parser."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from functools import lru_cache
from typing import Any

from hybridplan.evidence import EvidencePoint, same_class
from hybridplan.hardware.catalog import GPU

TABLE = "evidence.json"  # in hybridplan/data
# each source: its points grouped by where they come from (a page's id, a data file's name)
SECTIONS = ("pages", "boot_logs", "launch_reports")


def table_text(sections: Mapping[str, Mapping[str, Sequence[EvidencePoint]]]) -> str:
    """The table as written: each section's groups in order, one point a line (a changed point is a line)."""
    def group(name: str, pts: Sequence[EvidencePoint]) -> str:
        return f"    {json.dumps(name)}: [\n" + ",\n".join(f"      {json.dumps(asdict(p))}" for p in pts) + "\n    ]"

    body = ",\n".join(f"  {json.dumps(s)}: {{\n" + ",\n".join(group(g, pts) for g, pts in sections[s].items())
                      + "\n  }" for s in SECTIONS)
    return "{\n" + body + "\n}\n"


@lru_cache(maxsize=1)
def _table() -> dict[str, tuple[dict[str, Any], ...]]:
    """Each section's points, in order, as read (each becomes an EvidencePoint when a card asks for it)."""
    from hybridplan.packaged import data_text

    raw = json.loads(data_text(TABLE))
    return {s: tuple(p for pts in raw[s].values() for p in pts) for s in SECTIONS}


def rows(section: str) -> tuple[dict[str, Any], ...]:
    """A section's points as stored (plain data: `plan` compares failed launches on it without building points)."""
    return _table()[section]


def on_card(section: str, gpu: GPU, engine: str | None = None) -> tuple[EvidencePoint, ...]:
    """A section's launches on the card, or on a card whose fraction evidence transfers to it (of one engine)."""
    return tuple(EvidencePoint(**p) for p in _table()[section]
                 if (engine is None or p["engine"] == engine) and (p["gpu"] == gpu.id or same_class(gpu, p["gpu"])))
