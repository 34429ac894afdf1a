"""Write data/page_evidence.json: every bundled page's measured launches (its records and the selections its cells'
measurements cover) as the evidence points a verdict reads (hybridplan.cookbook.record_evidence). Run it after
editing a page's records or measurements, or a rule that moves how a measured command resolves;
tests/cookbook/test_record_evidence.py fails until the table matches the pages again.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path


def main() -> int:
    from hybridplan.cookbook.pages import bundled_ids, load_page
    from hybridplan.cookbook.record_evidence import TABLE, points, table_text

    out = Path(str(resources.files("hybridplan") / "data" / TABLE))
    pages = {pid: points(load_page(pid)) for pid in bundled_ids()}
    out.write_text(table_text(pages))
    print(f"{sum(map(len, pages.values()))} points from {len(pages)} pages -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
