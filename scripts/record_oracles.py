"""Record each modelled release's own answers: each oracle driver of its engine run on the release's scenarios,
written to conformance/recorded/<oracle>-<version>.json.gz (vllm- for vLLM's planning, vllm-parser- for its parser):
the scenario as the driver read it and the engine's answer, with the driver's header. The conformance tests compare
hybridplan with these; re-run this after changing a scenario, a bundled config or an oracle driver, or on adding a
release (the tests name the command).

Maintainer script; needs each release runnable beside the oracle interpreter: conformance/setup_oracle.sh (CPU torch
and the newest sglang), conformance/setup_releases.sh (the older sglang releases), conformance/setup_vllm_oracle.sh
VENV VERSION (each vLLM release).
Usage: python scripts/record_oracles.py [--engine sglang|vllm] [--release VERSION ...] [--python PYTHON]
(default: every engine, every modelled release; PYTHON: $HYBRIDPLAN_ORACLE_PYTHON, else .oracle-venv/bin/python).
Deterministic: an unchanged engine on unchanged scenarios gives the same bytes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from hybridplan.conformance import recorded
from hybridplan.conformance.oracle import ENGINES, Oracle, of_engine
from hybridplan.conformance.runner import NoEngine, run_oracle

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "conformance" / "recorded"


def record(described: Oracle, version: str, python: str, workers: int) -> Path:
    """Run release `version`'s oracle on its scenarios and write the recording; returns its path."""
    with tempfile.TemporaryDirectory(prefix="hybridplan-record-") as tmp:
        root = Path(tmp) / "models"
        root.mkdir()
        cases = described.cases(version, root)
        header, answers = run_oracle(described, python, [c.payload for c in cases], version=version,
                                     workers=workers)
        file = recorded.path(RECORDED, described.name, version)
        recorded.write(file, header, cases, answers, root)
    return file


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=ENGINES, action="append", help="default: every engine")
    parser.add_argument("--release", action="append", help="default: every modelled release of the engine")
    parser.add_argument("--python", default=os.environ.get("HYBRIDPLAN_ORACLE_PYTHON")
                        or str(ROOT / ".oracle-venv" / "bin" / "python"))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="driver processes per release")
    args = parser.parse_args()
    for engine in args.engine or ENGINES:
        oracles = of_engine(engine)
        modelled = oracles[0].releases
        releases = args.release or modelled
        unknown = [v for v in releases if v not in modelled]
        if unknown:
            print(f"{engine} {', '.join(unknown)}: not modelled ({', '.join(modelled)})", file=sys.stderr)
            return 2
        for version in releases:
            for described in oracles:
                start = time.monotonic()
                try:
                    file = record(described, version, args.python, args.workers)
                except NoEngine as exc:
                    print(f"{described.name} {version}: {exc}", file=sys.stderr)
                    return 2
                print(f"{described.name} {version}: {file.relative_to(ROOT)} ({file.stat().st_size:,} B, "
                      f"{time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
