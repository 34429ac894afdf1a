"""What each engine reads off a launch for `guard --fix` (ServingEngine.workload, .environment), and that sglang's
plan keeps the launcher the user typed, and the model where they typed it (the guard execs the planned command)."""

from __future__ import annotations

import pytest

from hybridplan.engine.api import for_engine

NVFP4 = "RadixArk/Qwen3.8-27B-NVFP4"


@pytest.mark.parametrize("engine, command, expected", [
    ("sglang", f"python -m sglang.launch_server --model-path {NVFP4} --context-length 8192 --max-running-requests 8",
     (8192, 8)),
    ("sglang", ("sglang", "serve", "Qwen/Qwen3.5-27B"), (262144, None)),  # the model's length; no cap
    ("vllm", "vllm serve Qwen/Qwen3.5-27B --max-model-len 4096 --max-num-seqs 4", (4096, 4)),
    ("vllm", "vllm serve Qwen/Qwen3.5-27B", (262144, None)),
    ("vllm", "vllm serve Qwen/Qwen3.5-27B --max-model-len auto", (None, None)),  # vLLM fits it at startup
])
def test_workload_is_the_launch_s_length_and_cap(engine, command, expected):
    assert for_engine(engine).workload(command) == expected


def test_environment_is_what_the_rules_read():
    environ = {"SGLANG_ENABLE_POST_CAPTURE_KV_SIZING": "1", "PATH": "/bin", "VLLM_USE_V1": "1", "HF_TOKEN": "x"}
    assert for_engine("sglang").environment(environ) == {"SGLANG_ENABLE_POST_CAPTURE_KV_SIZING": "1"}
    assert for_engine("vllm").environment(environ) == {}


@pytest.mark.parametrize("program", [("sglang", "serve"), ("python3", "-m", "sglang.launch_server")])
def test_sglang_plan_keeps_the_launcher(program):
    from hybridplan.engine.requests import PlanRequest

    head = list(program) + ([NVFP4] if program[0] == "sglang" else ["--model-path", NVFP4])
    out = for_engine("sglang").plan(PlanRequest(
        request_length=8192, concurrency=8, gpu="rtx5090",
        command=("SGLANG_X=1", *head, "--kv-cache-dtype", "fp8_e4m3", "--mem-fraction-static", "0.97")))
    assert out["fits"] is True
    assert out["command"].startswith("SGLANG_X=1 " + " ".join(head))  # a positional model stays positional
    assert "--mem-fraction-static 0.9 " in out["command"]
