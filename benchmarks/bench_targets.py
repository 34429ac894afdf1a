"""The speed targets of the engine-API issue, as ratios to one `explain` cold start (a fresh interpreter each run):
`cookbook check` of a page <= 3x, `cookbook matrix` <= 2x. Best of N runs (the machine's noise only adds time).

Run: python benchmarks/bench_targets.py [--runs 5] [--page qwen3.8-27b]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

EXPLAIN = ("explain", "--json", "--", "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.8-27B",
           "--speculative-algorithm", "DSPARK", "--speculative-draft-model-path", "RadixArk/Qwen3.8-27B-DSpark")
TARGETS = {"cookbook check": 3.0, "cookbook matrix": 2.0}


def best_of(argv: tuple[str, ...], runs: int) -> float:
    """The fastest wall time of `hybridplan argv` in a fresh interpreter, in seconds."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "hybridplan", *argv], capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--page", default="qwen3.8-27b")
    ns = ap.parse_args()
    base = best_of(EXPLAIN, ns.runs)
    print(f"explain cold start: {base * 1000:.0f} ms")
    for what, target in TARGETS.items():
        t = best_of((*what.split(), ns.page, "--json"), ns.runs)
        ratio = t / base
        print(f"{what} {ns.page}: {t * 1000:.0f} ms = {ratio:.2f}x explain (target <= {target:.0f}x): "
              f"{'met' if ratio <= target else 'MISSED'}")


if __name__ == "__main__":
    main()
