"""Every source of measured launches the CLI and the web hand the planner (planner.evidence.EvidenceSource): the
bundled pages' records, the public boot logs and the public launch reports. A new source joins here, once for `plan`,
`explain --gpu` and the web. Imports are lazy: naming the source costs nothing until a verdict on a card asks it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hybridplan.hardware.catalog import GPU
    from hybridplan.evidence import EvidencePoint


def all_evidence(engine: str, gpu: GPU, version: str) -> Sequence[EvidencePoint]:
    """Engine `engine`'s measured launches on the card and its class, from every source
    (planner.evidence.EvidenceSource)."""
    from hybridplan.cookbook.record_evidence import page_evidence
    from hybridplan.calibration.launch_reports import report_evidence
    from hybridplan.calibration.log_evidence import log_evidence

    return (tuple(p for p in page_evidence(gpu, version) if p.engine == engine) + tuple(log_evidence(engine, gpu, version))
            + tuple(report_evidence(engine, gpu, version)))
