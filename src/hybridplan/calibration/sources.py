"""Every source of measured launches the CLI and the web hand the planner (planner.evidence.EvidenceSource): the
bundled pages' records, the public boot logs and every engine's public launch reports, read from the one shipped
table they are derived into (evidence_table.py; a new source is a new section there, written by
scripts/record_evidence.py), once for `plan`, `explain --gpu` and the web. Imports are lazy: naming the source costs
nothing until a verdict on a card asks it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hybridplan.hardware.catalog import GPU
    from hybridplan.evidence import EvidencePoint


def all_evidence(engine: str, gpu: GPU, version: str) -> Sequence[EvidencePoint]:
    """Engine `engine`'s measured launches on the card and its class, from every source
    (planner.evidence.EvidenceSource)."""
    from hybridplan.evidence_table import SECTIONS, on_card

    return tuple(p for section in SECTIONS for p in on_card(section, gpu, engine))
