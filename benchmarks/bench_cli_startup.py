"""Cold-start time of `hybridplan explain` (a fresh interpreter each run), and which heavy modules it imports.

Run: python benchmarks/bench_cli_startup.py [--runs 10]. Prints the median and the slowest run in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMAND = [sys.executable, "-m", "hybridplan", "explain", "--json", "--pool-budget-gib", "66.5", "--",
           "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.8-27B", "--speculative-algorithm", "DSPARK",
           "--speculative-draft-model-path", "RadixArk/Qwen3.8-27B-DSpark"]
HEAVY = ("torch", "sglang", "transformers", "fastapi", "huggingface_hub", "numpy", "uvicorn")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=10)
    ns = ap.parse_args()
    times = []
    for _ in range(ns.runs):
        t0 = time.perf_counter()
        subprocess.run(COMMAND, check=True, capture_output=True)
        times.append((time.perf_counter() - t0) * 1000)
    probe = ("import sys, runpy; sys.argv = %r; "
             "import hybridplan.cli as c\ntry:\n    c.app()\nexcept SystemExit:\n    pass\n"
             "sys.stderr.write('HEAVY=' + ','.join(m for m in %r if m in sys.modules))") % (COMMAND[2:], HEAVY)
    err = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stderr
    heavy = err.rsplit("HEAVY=", 1)[-1].strip()
    print(f"explain cold start over {ns.runs} runs: median {statistics.median(times):.0f} ms, max {max(times):.0f} ms")
    print(f"heavy modules imported: {heavy or 'none'}")


if __name__ == "__main__":
    main()
