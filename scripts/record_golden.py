"""Record the golden outputs: every README example and the `--json` answers of explain, plan, logs, compare, ratio
and cookbook on both engines, plus the web API's answers to the same questions, as they are now.

`tests/test_golden.py` re-runs each case and compares, so a move or refactor that changes any output fails. A change
that is meant to change an output re-records it here (`python scripts/record_golden.py`) and the diff is reviewed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
OUT = ROOT / "tests" / "golden" / "outputs.json"

from golden_cases import cases, run_case  # noqa: E402


def main() -> int:
    os.environ["COLUMNS"] = "200"
    recorded = {name: run_case(spec) for name, spec in cases().items()}
    OUT.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"{len(recorded)} cases -> {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
