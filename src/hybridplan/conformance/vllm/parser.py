"""vLLM's parser as the conformance suite sees it (the oracle `vllm-parser`): the same `vllm serve` argv read by the
release's own parser (vllm/parse_driver.py, in the oracle interpreter) and by hybridplan's (engine/vllm/command.py),
compared value by value or refusal by refusal, and the release's parser recorded flag by flag, compared with the
registry hybridplan rewinds for it (engine/vllm/flags.json through flag_history.json: every parsing field, the hidden
and negating option strings included; help text aside)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from hybridplan.conformance.compare import Answer, Case, Comparison
from hybridplan.conformance.oracle import Oracle
from hybridplan.conformance.vllm import parse_schema
from hybridplan.conformance.vllm.oracle import release_pythonpath
from hybridplan.engine.registry import Flag
from hybridplan.engine.vllm.command import recorded
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
FLAGS = "flags"  # the id of the ask for the release's flag records

P = for_version(None).rules_package
RULES = {"parsed": f"{P}.command.parse_command", "error": f"{P}.command.parse_command",
         "allow_abbrev": f"{P}.command.registry", "flags": f"{P}.command.registry"}


def ours(version: str, argv: tuple[str, ...]) -> dict[str, Any]:
    """hybridplan's reading of `argv` in the driver's shape: the values that differ from the release's defaults, or
    the refusal (argparse's message after `vllm serve: error: `)."""
    engine = for_version(version)
    try:
        cmd = engine.parse_command("vllm serve " + shlex.join(argv))
    except BadInput as exc:
        return {"error": {"type": "argparse", "message": exc.message.removeprefix("vllm serve: error: "),
                          "rule": RULES["error"]}}
    reg = engine.registry()
    return {"parsed": json.loads(json.dumps({k: v for k, v in cmd.values.items() if v != reg.default(k)}))}


def expected(version: str, argv: tuple[str, ...]) -> dict[str, Any]:
    """What the release's answer must be for hybridplan to read `argv` as it does: hybridplan's own reading, except
    where hybridplan refuses by name what the release takes (HYBRIDPLAN_REFUSES: only that the release takes it is
    compared) or refuses in one line where the release raises (ENGINE_RAISES: the exception's type is compared).
    Where hybridplan does not refuse as those say, its own reading stands, and the comparison shows the drift."""
    mine = ours(version, argv)
    message = mine.get("error", {}).get("message", "")
    for refused, why in HYBRIDPLAN_REFUSES:
        if argv[1:] == refused and why in message:
            return {}
    for raising, exc, why in ENGINE_RAISES:
        if argv[1:] == raising and message == why:
            return {"error": {**mine["error"], "type": exc}}
    return mine


def _record(flag: Flag) -> dict[str, Any]:
    """A registry flag in the driver's record shape (the fields fields() compares)."""
    return {"dest": flag.dest, "options": list(flag.options), "kind": flag.kind, "nargs": flag.nargs,
            "type": flag.type, "choices": None if flag.choices is None else list(flag.choices),
            "default": flag.default, "const": flag.const, "deprecated": flag.deprecated, "required": flag.required,
            "aliases": list(flag.aliases), "negatives": sorted(flag.negatives)}


def cases(version: str, root: Path) -> list[Case]:
    """Every argv both parsers read (the model first) and the ask for the release's flag records, with what
    hybridplan expects of each (the driver reads no files: `root` stays empty)."""
    kinds = [(a, "spelling") for a in SPELLINGS] + [(a, "hybridplan refuses") for a, _ in HYBRIDPLAN_REFUSES] + \
        [(a, "engine raises") for a, *_ in ENGINE_RAISES]
    out = []
    for argv, family in kinds:
        sid = shlex.join(argv)
        out.append(Case(id=sid, payload={"id": sid, "argv": [MODEL, *argv]}, family=family,
                        predicted={"id": sid, **expected(version, (MODEL, *argv))}))
    reg = for_version(version).registry()
    out.append(Case(id=FLAGS, payload={"id": FLAGS, "flags": True}, family="registry",
                    predicted={"id": FLAGS, "allow_abbrev": reg.allow_abbrev,
                               "flags": [_record(f) for f in reg.flags]}))
    return out


def fields(answer: Answer) -> dict[str, Any]:
    """The compared fields: an argv's parse; the parser's option set, allow_abbrev and each flag's parsing fields
    (vLLM's own argument types as engine/vllm/command.py::recorded names them)."""
    if "parsed" in answer:
        return {"parsed": answer["parsed"]}
    if "flags" not in answer:
        return {}
    flags = {" ".join([f["dest"], *f["options"]]): f for f in recorded({"flags": answer["flags"]})["flags"]}
    return {"allow_abbrev": answer["allow_abbrev"], "flags": sorted(flags)} | {
        f"flags.{key}": [f["kind"], f["nargs"], f["type"], f["default"], f["const"], f["required"], f["deprecated"],
                         f["choices"], f.get("aliases", []), sorted(f.get("negatives", []))]
        for key, f in flags.items()}


def same_refusal(engine: Answer, ours: Answer) -> bool:
    """argparse's refusals by message; an exception the release raised by its type."""
    return bool(engine["type"] == ours["type"] and (engine["type"] != "argparse" or engine["message"] == ours["message"]))


def outcome(answer: Answer) -> str:
    """parsed, refused:<argparse or the exception>, or the flag records."""
    if "error" in answer:
        return f"refused:{answer['error']['type']}"
    return "parsed" if "parsed" in answer else "flags"


ORACLE = Oracle(
    name="vllm-parser", engine="vllm", driver="vllm.parse_driver", setup="conformance/setup_vllm_oracle.sh VENV VERSION",
    header=parse_schema.header, result=parse_schema.result, cases=cases, pythonpath=release_pythonpath,
    env_prefix="VLLM_", comparison=Comparison(fields=fields, rules=RULES, same_refusal=same_refusal), outcome=outcome)
