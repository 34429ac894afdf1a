"""The fake GPU box: scenario files for tests/verify/fake_launcher.py, a free port, and the synthetic fixtures."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

HERE = Path(__file__).parent
SYNTH = FIXTURES / "logs" / "synthetic"
BENCH = FIXTURES / "bench" / "sglang-0.5.23-bench-serving-dspark.txt"
PAGE = "qwen3.8-27b"
# one fully picked selection of the bundled page: every overlay dim chosen, so one point per sweep value
PICKS = ["--hw", "rtx5090", "--quant", "nvfp4-fp4-head", "--spec", "none", "--tier", "low-latency",
         "--ssm-dtype", "float32"]


def synth(case: str) -> str:
    return str(SYNTH / f"sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-{case}.log")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeBox:
    """Writes the scenario file and builds the `verify` arguments that run against it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.scenarios = root / "scenarios.json"
        self.argv_log = root / "argv.jsonl"
        self.child_pid = root / "child.pid"
        self.db = root / "results.sqlite"
        self.port = free_port()

    def configure(self, default: dict | None = None, points: list[dict] | None = None,
                  version: str = "0.5.23+g1cf2b8c54") -> "FakeBox":
        base = {"behavior": "serve", "log": synth("ok"), "bench": str(BENCH), "child_pid_file": str(self.child_pid)}
        self.scenarios.write_text(json.dumps({"version": version, "argv_log": str(self.argv_log),
                                              "default": {**base, **(default or {})}, "points": points or []}))
        return self

    @property
    def launcher(self) -> str:
        return f"{sys.executable} {HERE / 'fake_launcher.py'} {self.scenarios}"

    def args(self, *extra: str, boot_timeout: float = 20, picks: list[str] = PICKS) -> list[str]:
        return ["verify", PAGE, *picks, "--isl", "8192", "--osl", "1024", "--concurrency", "1", "--num-prompts", "4",
                "--launcher", self.launcher, "--db", str(self.db), "--run-dir", str(self.root / "runs"),
                "--port", str(self.port), "--boot-timeout", str(boot_timeout), "--stop-grace", "2", *extra]

    def launches(self) -> list[list[str]]:
        """argv of every launch_server the fake box saw, in order."""
        if not self.argv_log.exists():
            return []
        rows = [json.loads(line) for line in self.argv_log.read_text().splitlines()]
        return [r["argv"] for r in rows if r["argv"][:2] == ["-m", "sglang.launch_server"]]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purposes
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().split(")")[-1].split()[0] != "Z"


def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def box(tmp_path) -> FakeBox:
    return FakeBox(tmp_path)


def make_run(*, version: str = "0.5.23", commit: str = "1cf2b8c54", gpu: str = "rtx5090", sweep: str = "",
             selection: dict | None = None, flags: tuple[str, ...] = ("--mem-fraction-static 0.9",),
             outcome: str = "serves", failure: dict | None = None, boot: dict | None = None,
             bench: dict | None = None):
    """A stored run as `verify` writes it (the page's rtx5090 cell unless told otherwise)."""
    from hybridplan.verify.store import Run, RunKey

    sel = selection or {"hw": "rtx5090", "variant": "default", "quant": "nvfp4-fp4-head", "nodes": "single",
                        "spec": "none", "tier": "low-latency", "ssm-dtype": "float32"}
    key = RunKey(engine_version=version, engine_commit=commit, gpu=gpu, page=PAGE, selection=sel, flags=flags,
                 env=(), workload={"isl": 8192, "osl": 1024, "concurrency": 1, "num_prompts": 4, "dataset": "random"})
    return Run(key=key, sweep=sweep, outcome=outcome, failure=failure,
               boot=boot if boot is not None else {"max_mamba_cache_size": 35, "kv_tokens": 197163,
                                                   "max_total_num_tokens": 197163, "max_running_requests": 1},
               bench=bench if bench is not None else {"median_tpot_ms": 31.02, "accept_length": 3.21,
                                                      "successful_requests": 4},
               check=None, command="python -m sglang.launch_server ...",
               bench_command="python -m sglang.bench_serving --host 127.0.0.1 --port 30000 --num-prompts 4",
               log="[2026-08-22 10:00:00] ...", bench_output="...")
