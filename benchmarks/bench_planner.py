"""End-to-end time of `plan` and `ratio`: in-process (the search itself) and as CLI runs (with interpreter start);
and of one memory timeline (pools sized, headroom estimated), which every plan candidate builds a few times.

Run: python benchmarks/bench_planner.py [--runs 10]. A full plan search should stay well under a second.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

PLANS = {
    "rtx5090 nvfp4 dflash C1": dict(model="Qwen/Qwen3.8-27B", quant="nvfp4", gpu="rtx5090", request_length=9216,
                                    concurrency=1, spec="dflash"),
    "h200 fp8 mtp C64 (request cap searched)": dict(model="Qwen/Qwen3.8-27B", quant="fp8", gpu="h200",
                                                    request_length=5120, concurrency=64, spec="mtp"),
    "rtx5090 bf16 (nothing fits)": dict(model="Qwen/Qwen3.8-27B", gpu="rtx5090", request_length=9216, concurrency=1),
}
RATIO = ("python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B --speculative-algorithm DSPARK "
         "--speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark")
CLI_PLAN = [sys.executable, "-m", "hybridplan", "plan", "--json", "--model", "Qwen/Qwen3.8-27B", "--quant", "nvfp4",
            "--gpu", "rtx5090", "-L", "9216", "-C", "1", "--spec", "dflash"]


def timed(fn, runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=10)
    ns = ap.parse_args()
    from hybridplan.hardware.catalog import lookup
    from hybridplan.engine.sglang.serving.plan import Target, plan
    from hybridplan.engine.sglang.serving.ratio import balanced_ratio

    for label, kw in PLANS.items():
        target = Target(**{**kw, "gpu": lookup(kw["gpu"])})
        med, worst = timed(lambda: plan(target), ns.runs)
        print(f"plan  {label:32s} median {med:6.1f} ms, max {worst:6.1f} ms")
    for label, budget in (("no budget", None), ("budget 66.5 GiB (exact search)", 66.5), ("gpu h200", "h200")):
        kw = {"gpu": budget} if isinstance(budget, str) else {"budget": budget}
        med, worst = timed(lambda: balanced_ratio(RATIO, request_length=9216, concurrency=8, **kw), ns.runs)
        print(f"ratio {label:32s} median {med:6.1f} ms, max {worst:6.1f} ms")
    from hybridplan.engine.sglang.serving.loading import load
    from hybridplan.engine.sglang.serving.timeline import for_loaded

    card = lookup("h200")
    loaded = load(RATIO, platform=card.platform())
    med, worst = timed(lambda: for_loaded(loaded, gpu=card), ns.runs)
    print(f"timeline {'h200 dspark (pools + headroom)':29s} median {med:6.1f} ms, max {worst:6.1f} ms")
    med, worst = timed(lambda: subprocess.run(CLI_PLAN, check=True, capture_output=True), max(1, ns.runs // 2))
    print(f"CLI   {'hybridplan plan (cold start)':32s} median {med:6.1f} ms, max {worst:6.1f} ms")


if __name__ == "__main__":
    main()
