"""/api/plan with `engine: vllm` is `plan --engine vllm --json`: the same candidates, best change and command, from
the card alone or from a measured boot's available KV memory; SGLang's inputs are refused by name."""

from __future__ import annotations

import shlex
from typing import Any

import pytest

TARGETS = [
    # the card alone: bf16 KV holds 4.35 requests of 256K on an H200, fp8 KV halves the attention page
    ({"command": "vllm serve Qwen/Qwen3.5-27B", "gpu": "h200", "request_length": 262144, "concurrency": 8},
     {"--kv-cache-dtype": "fp8"}),
    # 0.24.0 runs prefix caching in 'all' mode (a state page per block); keeping it in 'align' is the cheapest change
    ({"command": "vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --enable-prefix-caching", "gpu": "h100-80gb",
      "request_length": 131072, "concurrency": 8, "engine_version": "0.24.0"},
     {"--mamba-cache-mode": "align"}),
    # a measured boot: 60 GiB at utilization 0.9, so 0.95 adds the card's 5 %
    ({"command": "vllm serve Qwen/Qwen3.5-27B --gpu-memory-utilization 0.9", "gpu": "h200", "kv_memory_gib": 60,
      "request_length": 131072, "concurrency": 16},
     {"--disable-prefix-caching": "", "--kv-cache-dtype": "fp8", "--gpu-memory-utilization": "0.95"}),
]
FLAGS = {"gpu": "--gpu", "request_length": "-L", "concurrency": "-C", "kv_memory_gib": "--kv-memory-gib",
         "engine_version": "--engine-version", "max_util": "--max-util"}


def _argv(body: dict[str, Any]) -> list[str]:
    argv = ["plan", "--engine", "vllm", "--json"]
    for k, v in body.items():
        if k in FLAGS:
            argv += [FLAGS[k], str(v)]
    return argv + ["--", *shlex.split(body["command"])]


@pytest.mark.parametrize("body,best", TARGETS)
def test_vllm_plan_is_the_cli_object(client: Any, cli_json: Any, body: dict[str, Any], best: dict[str, str]) -> None:
    code, expected = cli_json(*_argv(body))
    res = client.post("/api/plan", json={"engine": "vllm", **body})
    assert res.status_code == 200 and res.json() == expected
    assert code == 0 and expected["fits"] and expected["best"]["changes"] == best
    assert expected["measured"]["source"] == ("boot" if "kv_memory_gib" in body else "card")


def test_vllm_plan_nothing_fits_is_still_an_answer(client: Any, cli_json: Any) -> None:
    """20 GiB of KV memory cannot hold 64 requests of 128K: `fits: false` (the CLI's exit 1) with a 200."""
    body = {"command": "vllm serve Qwen/Qwen3.5-27B --gpu-memory-utilization 0.9", "gpu": "h200",
            "kv_memory_gib": 20, "request_length": 131072, "concurrency": 64}
    code, expected = cli_json(*_argv(body))
    res = client.post("/api/plan", json={"engine": "vllm", **body})
    assert code == 1 and res.status_code == 200 and res.json() == expected
    assert expected["fits"] is False and expected["command"] is None and expected["best"] is None


@pytest.mark.parametrize("extra,needle", [
    ({"tp": 2}, "tp: not taken with `engine: vllm`"),
    ({"model": "Qwen/Qwen3.5-27B"}, "model: not taken with `engine: vllm`"),
    ({"max_mem_fraction": 0.9}, "max_mem_fraction: not taken with `engine: vllm`"),
    ({"command": None}, "command: the vLLM launch to plan"),
    ({"engine_version": "nightly"}, "--engine-version: 'nightly' is not a vLLM version"),
    ({"max_util": 1.5}, "max_util: Input should be less than or equal to 1"),
    ({"engine": "sglang", "kv_memory_gib": 40}, "kv_memory_gib: not taken with `engine: sglang` (only with `engine: vllm`)"),
])
def test_vllm_plan_refuses_what_it_does_not_take(client: Any, extra: dict[str, Any], needle: str) -> None:
    body = {"engine": "vllm", **TARGETS[0][0], **extra}
    res = client.post("/api/plan", json=body)
    message = res.json()["error"]["message"]
    assert res.status_code == 400 and message.startswith(needle) and "\n" not in message
