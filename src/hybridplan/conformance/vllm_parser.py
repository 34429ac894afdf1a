"""vLLM parser conformance: the same `vllm serve` argv read by the release's own parser (vllm_parse_driver.py, in the
oracle interpreter) and by hybridplan's (engine/vllm/command.py), compared value by value or refusal by refusal."""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass
from importlib import resources
from typing import Any

from hybridplan.engine.vllm.engine import for_version
from hybridplan.errors import BadInput

MODEL = "Qwen/Qwen3.5-27B"
# spellings users type (issue 25): boolean forms, underscores, -O levels, dotted keys of JSON-valued flags,
# human-readable integers and `auto`, repeats and abbreviations, and refusals
SPELLINGS: tuple[tuple[str, ...], ...] = (
    ("--enable-prefix-caching",), ("--no-enable-prefix-caching",), ("--disable-prefix-caching",),
    ("--no-disable-prefix-caching",), ("--enforce-eager",), ("--no-enforce-eager",),
    ("--no-enable-chunked-prefill",), ("--disable-chunked-prefill",), ("--enable-chunked-prefill",),
    ("--max_model_len", "4096"), ("--max_model_len=4k",), ("--max-model-len=auto",), ("--max-model-len", "auto"),
    ("--max-model-len", "AUTO"), ("--max-model-len", "-1"), ("--max-model-len", "1K"), ("--max-model-len", "1M"),
    ("--max-model-len", "25.6k"), ("--max-model-len", "1.5K"), ("--max-model-len", "1e3"),
    ("--max-num-batched-tokens", "8K"), ("--max_num_batched_tokens=2k",), ("--max-num-seqs", "x"),
    ("-O3",), ("-O=2",), ("-O", "1"), ("-O0",), ("-O.cudagraph_mode=FULL",),
    ("-cc.cudagraph_mode=FULL",), ("--compilation-config.cudagraph_mode", "FULL"),
    ("--compilation_config.cudagraph_mode", "FULL_AND_PIECEWISE"), ("-cc.cudagraph_mode=FULL", "-cc.mode", "3"),
    ("--compilation-config", '{"cudagraph_mode": "PIECEWISE"}'),
    ("-cc.cudagraph_capture_sizes+", "1,2", "-cc.cudagraph_capture_sizes+=4"),
    ("--compilation-config", '{"max_cudagraph_capture_size": 2K}'),
    ("--speculative-config", '{"method": "mtp", "num_speculative_tokens": 2}'),
    ("-sc.method", "mtp", "-sc.num_speculative_tokens=2"),
    ("--speculative-config", '{"method": "mtp"}', "-sc.num_speculative_tokens", "3"),
    ("-tp", "2"), ("-tp=2", "-tp", "4"), ("--tensor_parallel_size", "2"), ("--enable-prefix", "--max-model", "4096"),
    ("--gpu-memory-utilization", "0.85"), ("--kv_cache_dtype=fp8",), ("--kv-cache-dtype", "fp9"),
    ("--block-size", "16.5"), ("--block-size", "64"), ("--no-such-flag",), ("--dtype", "bfloat16", "--seed", "7"),
)
# what hybridplan refuses by name although the release's parser takes it: a JSON value it could not answer in JSON
HYBRIDPLAN_REFUSES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("--speculative-config", '{"method": "mtp", "num_speculative_tokens": 1, "x": NaN}'),
     "`x`: NaN is not a finite number"),
    (("-sc.num_speculative_tokens", "1e999"), "`num_speculative_tokens`: Infinity is not a finite number"),
)
# where the release's parser raises (a traceback, not argparse's refusal), hybridplan refuses in one line
ENGINE_RAISES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("-cc.mode",), "IndexError", "argument -cc.mode: expected one argument"),  # a dotted key with no value
)


@dataclass(frozen=True)
class Difference:
    argv: tuple[str, ...]
    engine: Any
    hybridplan: Any


def argvs() -> list[tuple[str, ...]]:
    """Every argv the comparison feeds both parsers (the model first)."""
    return [(MODEL, *a) for a in SPELLINGS + tuple(a for a, _ in HYBRIDPLAN_REFUSES) + tuple(a for a, *_ in ENGINE_RAISES)]


def ours(version: str, argv: tuple[str, ...]) -> dict[str, Any]:
    """hybridplan's answer in the driver's shape: the values that differ from the release's defaults, or the
    refusal (argparse's message after `vllm serve: error: `)."""
    engine = for_version(version)
    try:
        cmd = engine.parse_command("vllm serve " + shlex.join(argv))
    except BadInput as exc:
        return {"error": exc.message.removeprefix("vllm serve: error: ")}
    reg = engine.registry()
    return {"parsed": json.loads(json.dumps({k: v for k, v in cmd.values.items() if v != reg.default(k)}))}


def run_oracle(python: str, pythonpath: str, cases: list[tuple[str, ...]], timeout: float = 300) -> tuple[
        dict[str, Any], list[dict[str, Any]]]:
    """(header, answers in case order) from vllm_parse_driver.py run by `python` with the release on `pythonpath`;
    RuntimeError when there is no vLLM behind it."""
    driver = str(resources.files("hybridplan.conformance") / "vllm_parse_driver.py")
    lines = "".join(json.dumps({"id": i, "argv": list(a)}) + "\n" for i, a in enumerate(cases))
    proc = subprocess.run([python, driver], input=lines, capture_output=True, text=True, timeout=timeout,
                          env={"PYTHONPATH": pythonpath, "PATH": "/usr/bin:/bin"})
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if not answers or answers[0].get("engine") is None:
        raise RuntimeError(f"no vLLM parser: {(answers[0].get('error') if answers else proc.stderr[-500:])}")
    by_id = {a["id"]: a for a in answers[1:]}
    return answers[0], [by_id[i] for i in range(len(cases))]


def compare(version: str, cases: list[tuple[str, ...]], answers: list[dict[str, Any]]) -> list[Difference]:
    """Every argv whose parse (or refusal, and its message) differs, except HYBRIDPLAN_REFUSES (taken by the
    release, refused by hybridplan with that message) and ENGINE_RAISES (the release raises that exception,
    hybridplan refuses with that message)."""
    refused = {(MODEL, *a): why for a, why in HYBRIDPLAN_REFUSES}
    raises = {(MODEL, *a): (exc, why) for a, exc, why in ENGINE_RAISES}
    out = []
    for argv, engine in zip(cases, answers):
        mine = ours(version, argv)
        if argv in refused:
            if "parsed" not in engine or refused[argv] not in mine.get("error", ""):
                out.append(Difference(argv, engine, mine))
        elif argv in raises:
            exc, why = raises[argv]
            if not str(engine.get("error", "")).startswith(exc + ":") or mine.get("error") != why:
                out.append(Difference(argv, engine, mine))
        elif {k: v for k, v in engine.items() if k != "id"} != mine:
            out.append(Difference(argv, engine, mine))
    return out
