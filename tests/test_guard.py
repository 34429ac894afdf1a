"""`hybridplan guard` in front of a stub engine: a program on PATH named as the engine's launcher (`sglang`, `vllm`)
that records its argv, environment, PID and the signals it receives. The exec is transparent (same argv and env,
the same process: a SIGTERM sent to the guard's PID reaches the stub, and the exit code is the stub's), a refusal
exits before the stub runs, and `--fix` runs the planned launch."""

from __future__ import annotations

import json
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hybridplan
from fake_smi import install

SERVES_H200 = ["sglang", "serve", "Qwen/Qwen3.5-27B", "--mem-fraction-static", "0.85"]
FAILS_5090 = ["sglang", "serve", "RadixArk/Qwen3.8-27B-NVFP4", "--kv-cache-dtype", "fp8_e4m3",
              "--mem-fraction-static", "0.97", "--context-length", "8192", "--max-running-requests", "8"]
STUB = '''#!{python}
import json, os, signal, sys, time
record = os.environ["STUB_RECORD"]

def stop(signum, frame):
    with open(record + ".signals", "a") as f:
        f.write(signal.Signals(signum).name + "\\n")
    sys.exit(42)

signal.signal(signal.SIGTERM, stop)
with open(record + ".tmp", "w") as f:
    json.dump({{"argv": sys.argv[1:], "program": os.path.basename(sys.argv[0]), "pid": os.getpid(),
               "env": dict(os.environ)}}, f)
os.rename(record + ".tmp", record)
print("stub engine up", flush=True)
while os.environ.get("STUB_WAIT"):
    time.sleep(0.05)
sys.exit(int(os.environ.get("STUB_EXIT", "0")))
'''


@pytest.fixture
def stub(tmp_path: Path) -> dict[str, str]:
    """A PATH with the stub as `sglang` and `vllm` (and nothing else), and the environment the guard runs in."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sglang", "vllm"):
        path = bin_dir / name
        path.write_text(STUB.format(python=sys.executable))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return {"PATH": str(bin_dir), "HOME": str(tmp_path), "LANG": "C.UTF-8", "STUB_RECORD": str(tmp_path / "record"),
            "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING": "0", "MY_SETTING": "kept as is"}


def _guard(env: dict[str, str], *argv: str, wait: bool = True) -> subprocess.Popen[str] | subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "hybridplan", "guard", *argv]
    if wait:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _record(env: dict[str, str], timeout: float = 300) -> dict:
    path = Path(env["STUB_RECORD"])
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, "the stub engine never started"
        time.sleep(0.05)
    return json.loads(path.read_text())


def test_a_launch_that_serves_is_exec_ed_unchanged_in_the_same_process(stub):
    env = {**stub, "STUB_WAIT": "1"}
    proc = _guard(env, "--gpu", "h200", "--", *SERVES_H200, wait=False)
    try:
        rec = _record(env)
        assert rec["pid"] == proc.pid  # exec: the guard's process is the engine's
        assert rec["program"] == "sglang" and rec["argv"] == SERVES_H200[1:]
        assert rec["env"] == env  # nothing added, nothing dropped
        proc.send_signal(signal.SIGTERM)  # what `docker stop` sends to the entrypoint's PID
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 42  # the stub's own exit on SIGTERM
    assert Path(env["STUB_RECORD"] + ".signals").read_text() == "SIGTERM\n"
    assert out == "stub engine up\n"  # stdout is the engine's; the guard wrote only to stderr
    assert "guard: serves on h200 (sglang 0.5.23)" in err and "guard: exec sglang serve" in err


def test_the_exit_code_and_the_launch_s_assignments_are_the_engine_s(stub):
    proc = _guard({**stub, "STUB_EXIT": "7"}, "--gpu", "h200", "--", "FOO=bar baz", *SERVES_H200)
    assert proc.returncode == 7, proc.stderr
    rec = _record(stub)
    assert rec["argv"] == SERVES_H200[1:] and rec["env"] == {**stub, "STUB_EXIT": "7", "FOO": "bar baz"}


def test_a_failing_launch_stops_before_the_engine_with_verdict_phase_evidence_and_fix(stub):
    proc = _guard(stub, "--gpu", "rtx5090", "--", *FAILS_5090)
    assert proc.returncode == 3
    assert not Path(stub["STUB_RECORD"]).exists() and proc.stdout == ""
    err = proc.stderr
    assert "guard: fails on rtx5090 (sglang 0.5.23) in phase cuda_graph: the 0.92 GiB slack cannot hold" in err
    assert "  evidence: extrapolated - 0.11 above what boot log qwen38-27b-cookbook-dspark-fp32-ll-rtx5090" in err
    assert "fix (the planner's fewest changes for 8 x 8,192-token requests):" in err
    assert "--mem-fraction-static 0.97 -> --mem-fraction-static 0.9\n" in err
    assert "guard: refused: the engine is not started (--fix runs the planned launch)" in err


def test_fix_runs_the_planned_launch(stub):
    planned = hybridplan.plan(FAILS_5090, request_length=8192, concurrency=8, gpu="rtx5090")
    proc = _guard(stub, "--gpu", "rtx5090", "--fix", "--", *FAILS_5090)
    assert proc.returncode == 0, proc.stderr
    rec = _record(stub)
    assert ["sglang", *rec["argv"]] == planned.command.split()
    assert rec["argv"][rec["argv"].index("--mem-fraction-static") + 1] == "0.9"
    assert "guard: --fix: the planned launch serves" in proc.stderr


def test_the_card_comes_from_nvidia_smi(stub):
    install(Path(stub["PATH"]), ["0, GPU-aaaa, NVIDIA H200, 143771"])
    proc = _guard({**stub, "STUB_EXIT": "0"}, "--", *SERVES_H200)
    assert proc.returncode == 0 and "guard: serves on h200" in proc.stderr, proc.stderr
    assert _record(stub)["argv"] == SERVES_H200[1:]


def test_without_nvidia_smi_the_guard_does_not_guess(stub):
    proc = _guard(stub, "--", *SERVES_H200)
    assert proc.returncode == 2 and not Path(stub["STUB_RECORD"]).exists()
    assert proc.stderr.startswith("error: no --gpu and no nvidia-smi on PATH") and proc.stderr.count("\n") == 1


def test_memory_other_processes_hold_leaves_no_verdict(stub):
    install(Path(stub["PATH"]), ["0, GPU-aaaa, NVIDIA H200, 143771"], ["GPU-aaaa, 2048"])
    proc = _guard(stub, "--", *SERVES_H200)
    assert proc.returncode == 4 and not Path(stub["STUB_RECORD"]).exists()
    assert "other processes hold 2048 MiB of it" in proc.stderr
    proc = _guard(stub, "--on-unknown", "exec", "--", *SERVES_H200)
    assert proc.returncode == 0 and _record(stub)["argv"] == SERVES_H200[1:]


def test_an_engine_refusal_stops_before_the_engine(stub):
    proc = _guard(stub, "--gpu", "rtx4090", "--engine", "vllm", "--", "vllm", "serve", "Qwen/Qwen3.5-9B",
                  "--max-model-len", "262144")
    assert proc.returncode == 3 and not Path(stub["STUB_RECORD"]).exists()
    assert "in phase kv_cache: vLLM refuses to start: To serve at least one request" in proc.stderr
    assert "  rule: v1/core/kv_cache_planning.py::_check_enough_kv_cache_memory\n" in proc.stderr
    assert "  no fix for 1 x 262,144-token requests: no launch the planner tries serves it\n" in proc.stderr


def test_a_launch_the_model_cannot_judge_follows_on_unknown(stub):
    launch = ["vllm", "serve", "no-such/model", "--max-model-len", "4096"]
    proc = _guard(stub, "--gpu", "h100-80gb", "--engine", "vllm", "--", *launch)
    assert proc.returncode == 4 and not Path(stub["STUB_RECORD"]).exists()
    assert "guard: no verdict on h100-80gb (vllm 0.33.0): the engine model cannot judge the launch" in proc.stderr
    proc = _guard(stub, "--gpu", "h100-80gb", "--engine", "vllm", "--on-unknown", "exec", "--", *launch)
    assert proc.returncode == 0 and _record(stub)["argv"] == launch[1:]


def test_a_program_not_on_path_exits_as_a_shell_does(stub):
    proc = _guard(stub, "--gpu", "h100-80gb", "--on-unknown", "exec", "--", "no-such-program", "--flag")
    assert proc.returncode == 127 and "error: guard: cannot run 'no-such-program'" in proc.stderr


def test_bad_guard_options_exit_2_before_anything_runs(stub):
    for argv in (["--gpu", "no-such-card", "--", *SERVES_H200], ["--gpu", "h200", "--on-unknown", "maybe", "--",
                                                                 *SERVES_H200], ["--gpu", "h200"]):
        proc = _guard(stub, *argv)
        assert proc.returncode == 2 and not Path(stub["STUB_RECORD"]).exists(), (argv, proc.stderr)


def test_the_engine_gets_sigpipe_as_a_shell_leaves_it(stub, tmp_path):
    """Python ignores SIGPIPE, and an ignored signal stays ignored across exec: the guard restores the default first
    (a shell stub reads its own ignored-signal mask, which the kernel carries over)."""
    shell_stub = Path(stub["PATH"]) / "sglang"
    shell_stub.write_text('#!/bin/sh\nwhile read -r key value; do [ "$key" = SigIgn: ] && echo "$key $value" '
                          '> "$STUB_RECORD"; done < /proc/$$/status\nexit 0\n')  # shell builtins only: PATH is bare
    proc = _guard(stub, "--gpu", "h200", "--", *SERVES_H200)
    assert proc.returncode == 0, proc.stderr
    ignored = int(Path(stub["STUB_RECORD"]).read_text().split()[1], 16)
    assert not ignored & (1 << (signal.SIGPIPE - 1)) and not ignored & (1 << (signal.SIGXFSZ - 1))
