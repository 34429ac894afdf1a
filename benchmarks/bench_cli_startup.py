"""Cold start of `hybridplan explain` beside AIConfigurator's `aiconfigurator cli estimate` for the same model and card,
in one run: each command in a fresh process, turn about (A B A B ...), so a drift in the machine's speed hits both;
and `plan` and `compare` on the same card beside `explain` (issue 26: within 2x of it).

The package's bytecode is compiled first, as `pip install` leaves it (an editable checkout under
PYTHONDONTWRITEBYTECODE would otherwise recompile every changed module on each run; AIConfigurator's install is
compiled by pip).

Run: python benchmarks/bench_cli_startup.py [--runs 10] [--aiconfigurator PATH]. AIConfigurator lives in its own
environment (`python -m venv /tmp/aic-venv && /tmp/aic-venv/bin/pip install aiconfigurator`); without it only
hybridplan is timed. Prints, per command, the median and slowest wall time and the median CPU time (user + sys) in
milliseconds, and the median of the pairwise ratios AIConfigurator / hybridplan. What a cold start imports is tested
in tests/test_import_graph.py (on the import graph, not on time).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

MODEL, CARD, AIC_SYSTEM = "Qwen/Qwen3.5-27B", "h200", "h200_sxm"
LAUNCH = ["--", "python", "-m", "sglang.launch_server", "--model-path", MODEL]
HYBRIDPLAN = {
    "explain --json --pool-budget-gib 66.5": [sys.executable, "-m", "hybridplan", "explain", "--json",
                                              "--pool-budget-gib", "66.5", *LAUNCH],
    f"explain --json --gpu {CARD}": [sys.executable, "-m", "hybridplan", "explain", "--json", "--gpu", CARD, *LAUNCH],
    f"plan --json --gpu {CARD} -L 32768 -C 8": [sys.executable, "-m", "hybridplan", "plan", "--json", "--gpu", CARD,
                                               "-L", "32768", "-C", "8", *LAUNCH],
    f"compare --json --gpu {CARD} -L 32768": [sys.executable, "-m", "hybridplan", "compare", "--json", "--model", MODEL,
                                             "--gpu", CARD, "-L", "32768"],
}
EXPLAIN = f"explain --json --gpu {CARD}"  # what plan and compare are held within 2x of


def _timed(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of one run of `cmd` in a fresh process; a failed run stops the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10, help="counted runs of each command (after one warm-up run)")
    ap.add_argument("--aiconfigurator", default=shutil.which("aiconfigurator") or "/tmp/aic-venv/bin/aiconfigurator",
                    help="the aiconfigurator executable (its own environment)")
    ns = ap.parse_args()
    commands = dict(HYBRIDPLAN)
    aic = f"aiconfigurator cli estimate --model-path {MODEL} --system {AIC_SYSTEM} --backend sglang"
    if os.access(ns.aiconfigurator, os.X_OK):
        commands[aic] = [ns.aiconfigurator, "cli", "estimate", "--model-path", MODEL, "--system", AIC_SYSTEM,
                         "--backend", "sglang"]
    else:
        print(f"no aiconfigurator at {ns.aiconfigurator}: timing hybridplan alone")
    import compileall

    import hybridplan

    compileall.compile_dir(os.path.dirname(hybridplan.__file__), quiet=1)
    for cmd in commands.values():  # warm-up: the file cache, not the interpreter
        _timed(cmd)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(ns.runs):
        for name, cmd in commands.items():
            wall, cpu = _timed(cmd)
            walls[name].append(wall)
            cpus[name].append(cpu)
    print(f"{ns.runs} runs each, turn about; PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")
    for name in commands:
        print(f"  {name}: wall median {statistics.median(walls[name]) * 1000:.0f} ms "
              f"(max {max(walls[name]) * 1000:.0f}), cpu median {statistics.median(cpus[name]) * 1000:.0f} ms")
    if aic in commands:
        for name in HYBRIDPLAN:
            ratios = [a / h for a, h in zip(walls[aic], walls[name])]
            print(f"  aiconfigurator / hybridplan {name}: {statistics.median(ratios):.1f}x (wall, median of pairs)")
    for name in HYBRIDPLAN:
        if name.split()[0] in ("plan", "compare"):
            ratios = [h / e for h, e in zip(walls[name], walls[EXPLAIN])]
            print(f"  hybridplan {name} / {EXPLAIN}: {statistics.median(ratios):.2f}x (wall, median of pairs)")


if __name__ == "__main__":
    main()
