"""Write data/evidence.json: every measured launch a verdict's confidence reads (hybridplan.evidence_table):
each bundled page's records and the selections its cells' measurements cover, the public boot logs, and every
engine's public launch reports, each resolved by the engine that ran it. Run it after editing a page's records or
measurements, data/boot_logs.yaml, a data/<engine>_launch_reports.yaml, or a rule that moves how a measured command
resolves; tests/cookbook/test_record_evidence.py and tests/verify/test_evidence_table.py fail until it matches again.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path


def main() -> int:
    from hybridplan.evidence_table import TABLE, table_text
    from hybridplan.calibration.launch_reports import report_points
    from hybridplan.calibration.log_evidence import log_points
    from hybridplan.cookbook.pages import bundled_ids, load_page
    from hybridplan.cookbook.record_evidence import points
    from hybridplan.engine.api import engines

    out = Path(str(resources.files("hybridplan") / "data" / TABLE))
    sections = {"pages": {pid: points(load_page(pid)) for pid in bundled_ids()},
                "boot_logs": {"boot_logs.yaml": log_points()},
                "launch_reports": {engine: report_points(engine) for engine in engines()}}
    out.write_text(table_text(sections))
    print(", ".join(f"{sum(map(len, groups.values()))} {name} points" for name, groups in sections.items())
          + f" -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
