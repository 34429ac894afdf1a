"""How fast a cookbook page evaluates: `matrix` over every bundled page (every reachable selection rendered with
its calculator ratio), one `render`, and `check` (which adds the GPU fit of every selection).

Run: python benchmarks/bench_cookbook.py [--runs 5] [--check]. Cold = a fresh interpreter's first matrix (model
configs, flag registry and planner loads included); warm = the same call again (memoised engine resolutions).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COLD = ("import time; from hybridplan.cookbook import load_page; from hybridplan.cookbook.matrix import matrix; "
        "p = load_page({pid!r}); "
        "t = time.perf_counter(); m = matrix(p); print((time.perf_counter() - t) * 1000, len(m['selections']))")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--check", action="store_true", help="also time `cookbook check` on the bundled pages")
    ns = ap.parse_args()
    from hybridplan.cookbook import bundled_ids, check_paths, load_page
    from hybridplan.cookbook.matrix import matrix
    from hybridplan.cookbook.render import render

    for pid in bundled_ids():
        out = subprocess.run([sys.executable, "-c", COLD.format(pid=pid)], check=True, capture_output=True, text=True)
        cold_ms, n = out.stdout.split()
        page = load_page(pid)
        matrix(page)
        warm = []
        for _ in range(ns.runs):
            t0 = time.perf_counter()
            matrix(page)
            warm.append((time.perf_counter() - t0) * 1000)
        print(f"matrix {pid:22s} {int(n):4d} selections: cold {float(cold_ms):7.1f} ms, "
              f"warm median {statistics.median(warm):6.1f} ms")
    page = load_page("qwen3.8-27b")
    picks = {"hw": "rtx5090", "quant": "nvfp4-fp4-head", "spec": "dflash", "tier": "high-throughput"}
    times = []
    for _ in range(ns.runs * 20):
        t0 = time.perf_counter()
        render(page, picks)
        times.append((time.perf_counter() - t0) * 1000)
    print(f"render qwen3.8-27b (warm)           median {statistics.median(times):6.2f} ms")
    if ns.check:
        t0 = time.perf_counter()
        report = check_paths([])
        print(f"check  bundled pages ({len(report.files)})            {(time.perf_counter() - t0):6.1f} s, "
              f"{report.summary()}")


if __name__ == "__main__":
    main()
