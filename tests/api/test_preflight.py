"""`hybridplan.preflight`, the guard's decision without the exec: the outcome follows the verdict (never blocks a
launch it says serves, never passes one it says fails), the fix plans the launch's own workload, and the verdict
sees the environment the engine will."""

from __future__ import annotations

import pytest

import hybridplan
from hybridplan.api.preflight import Launch

SERVES = ["sglang", "serve", "Qwen/Qwen3.5-27B", "--mem-fraction-static", "0.85"]
FAILS = ["sglang", "serve", "RadixArk/Qwen3.8-27B-NVFP4", "--kv-cache-dtype", "fp8_e4m3", "--mem-fraction-static",
         "0.97", "--context-length", "8192", "--max-running-requests", "8"]
ENV = {"PATH": "/nonexistent"}


def test_a_serving_verdict_runs_the_launch_as_given():
    p = hybridplan.preflight(SERVES, gpu="h200", environ=ENV)
    assert p.verdict == hybridplan.explain(SERVES, gpu="h200").verdict and p.verdict.serves
    assert (p.outcome, p.launch, p.fixed, p.fix) == ("serves", Launch(argv=tuple(SERVES)), False, None)


@pytest.mark.parametrize("gpu, command", [("rtx5090", FAILS), ("rtx4090", ["python3", "-m", "sglang.launch_server",
                                          "--model-path", "Qwen/Qwen3.5-9B", "--context-length", "8192",
                                          "--max-running-requests", "4"])])
def test_a_failing_verdict_runs_nothing_and_shows_the_fix(gpu, command):
    p = hybridplan.preflight(command, gpu=gpu, environ=ENV)
    v = hybridplan.explain(command, gpu=gpu).verdict
    assert p.outcome == "fails" and p.launch is None and p.verdict == v and not v.serves
    planned = hybridplan.plan(command, gpu=gpu, request_length=int(command[command.index("--context-length") + 1]),
                              concurrency=int(command[-1]))
    assert p.fix is not None and p.fix.payload == planned.payload  # the launch's own L and C
    assert p.fix_launch == Launch(argv=tuple(planned.command.split())) and p.fix_launch.argv[0] == command[0]


def test_fix_runs_the_planned_launch_once_its_verdict_serves():
    p = hybridplan.preflight(FAILS, gpu="rtx5090", fix=True, environ=ENV)
    assert p.outcome == "serves" and p.fixed and p.launch == p.fix_launch
    assert p.fix_verdict == hybridplan.explain(list(p.launch.argv), gpu="rtx5090").verdict and p.fix_verdict.serves
    assert p.changes == (("--mem-fraction-static 0.97", "--mem-fraction-static 0.9"),
                         (None, "--mamba-full-memory-ratio 3.0"))


def test_the_fix_plans_for_one_request_where_the_launch_caps_none():
    uncapped = FAILS[:-2]
    p = hybridplan.preflight(uncapped, gpu="rtx5090", environ=ENV)
    assert (p.fix.request_length, p.fix.concurrency) == (8192, 1)
    p = hybridplan.preflight(uncapped, gpu="rtx5090", request_length=4096, concurrency=2, environ=ENV)
    assert (p.fix.request_length, p.fix.concurrency) == (4096, 2)


def test_the_verdict_sees_the_engine_s_environment_under_the_launch_s_own(monkeypatch):
    from hybridplan.api import calls

    seen = []
    run = calls.run_explain

    def spy(req, *args, **kwargs):
        seen.append(req.command)
        return run(req, *args, **kwargs)

    monkeypatch.setattr(calls, "run_explain", spy)
    environ = {**ENV, "SGLANG_MAMBA_SSM_DTYPE": "bfloat16", "SGLANG_X": "1", "HF_TOKEN": "secret"}
    hybridplan.preflight(["SGLANG_X=2", *SERVES], gpu="h200", environ=environ)
    assert seen == [("SGLANG_MAMBA_SSM_DTYPE=bfloat16", "SGLANG_X=2", *SERVES)]


def test_memory_others_hold_on_a_card_that_would_serve_leaves_no_verdict(tmp_path):
    from fake_smi import install

    install(tmp_path, ["0, GPU-aaaa, NVIDIA H200, 143771"], ["GPU-aaaa, 512"])
    p = hybridplan.preflight(SERVES, environ={"PATH": str(tmp_path)})
    assert (p.outcome, p.verdict, p.launch, p.card) == ("unknown", None, None, "h200")
    assert "other processes hold 512 MiB of it" in p.reason
    p = hybridplan.preflight(FAILS, gpu="detect", gpu_memory_gib=31.84, environ={"PATH": str(tmp_path)})
    assert p.outcome == "fails"  # less memory never rescues a launch that fails on the empty card


def test_the_guard_s_own_inputs_are_bad_input():
    for kwargs in ({"gpu": "no-such-card"}, {"gpu": "h200", "engine": "tgi"}, {"gpu": "h200", "engine_version": "0.1"}):
        with pytest.raises(hybridplan.BadInput):
            hybridplan.preflight(SERVES, environ=ENV, **kwargs)
    with pytest.raises(hybridplan.BadInput, match="no launch command"):
        hybridplan.preflight(["A=1"], gpu="h200", environ=ENV)


def test_launch_words_split_leading_assignments_only():
    launch = Launch.of(["A=1", "B=x=y", "prog", "C=3"])
    assert launch == Launch(env=(("A", "1"), ("B", "x=y")), argv=("prog", "C=3"))
    assert launch.words({"A": "0", "D": "4"}) == ("A=1", "D=4", "B=x=y", "prog", "C=3")
