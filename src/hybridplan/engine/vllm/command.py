"""A vLLM launch as typed (`vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server ...`) or as its boot
log's `non-default args: {...}` line, parsed with the release's own flag registry."""

from __future__ import annotations

import ast
import json
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from hybridplan.engine import numbers
from hybridplan.engine.numbers import Bound
from hybridplan.engine.registry import Converter, Flag, FlagRegistry, parse_argv, registry_from_json, rewind
from hybridplan.engine.vllm.behaviours import NEWEST, RELEASES
from hybridplan.engine.vllm import flexible
from hybridplan.errors import BadInput
from hybridplan.limits import MAX_ARGS, MAX_COMMAND_CHARS, MAX_CONTEXT, MAX_PARALLEL, MAX_REQUESTS

VERSION = NEWEST.version  # the newest modelled release (flags.json); older ones rewind flag_history.json
_PROGRAMS = (("vllm", "serve"), ("python", "-m", "vllm.entrypoints.openai.api_server"),
             ("python3", "-m", "vllm.entrypoints.openai.api_server"))
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,255}=")
ARGS_MARKER = "non-default args: "  # entrypoints/utils.py::log_non_default_args


# The range hybridplan accepts for the values it sizes from (engine/registry.py's BOUNDS are keyed by sglang's dests)
_TOKENS = Bound(1, MAX_CONTEXT, "tokens in one context")
BOUNDS: dict[str, Bound] = {
    "max_model_len": Bound(-1, MAX_CONTEXT, "tokens in one context; -1 or auto fits it to the memory"),
    **dict.fromkeys(("block_size", "mamba_block_size", "max_num_batched_tokens"), _TOKENS),
    **dict.fromkeys(("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"),
                    Bound(1, MAX_PARALLEL, "GPUs in one deployment")),
    "max_num_seqs": Bound(1, MAX_REQUESTS, "requests one server can hold"),
    "gpu_memory_utilization": Bound(0.0, 1.0, "a fraction of GPU memory", lo_open=True),
}
_INT_TYPES = frozenset({"int", "human_readable_int", "human_readable_int_or_auto"})


@dataclass(frozen=True, kw_only=True)
class VllmCommand:
    """Explicit values by dest (the parser's, after vLLM's own spellings are normalised) and the env."""

    values: dict[str, Any]
    env: tuple[tuple[str, str], ...] = ()
    source: str = "command"  # command | non-default-args
    # the launch as the shell splits it (continuations joined, comments dropped), flags spelled as the parser reads
    # them (--max_model_len is --max-model-len)
    tokens: tuple[str, ...] = ()


def _json(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((resources.files(__package__) / name).read_text())
    return data


@lru_cache(maxsize=32)  # one per modelled release
def registry(version: str = VERSION) -> FlagRegistry:
    """The release's `vllm serve` parser recorded by scripts/gen_vllm_flag_registry.py: flags.json for the newest,
    rewound through flag_history.json for an older one (a release whose parser is its predecessor's has an empty
    step)."""
    return registry_from_json(recorded(rewind(_json("flags.json"), _json("flag_history.json")["releases"],
                                              tuple(RELEASES), version)))


def recorded(raw: dict[str, Any]) -> dict[str, Any]:
    """A flag file's records with vLLM's own argument types (recorded as `vllm_human_readable_int`,
    `vllm_human_readable_int_or_auto`: not sglang's) named as this parser's converters name them."""
    return {**raw, "flags": [f | {"type": f["type"].removeprefix("vllm_")} if isinstance(f["type"], str) else f
                             for f in raw["flags"]]}


def _type_of(flag: Flag) -> Converter | None:
    """vLLM's own converter for a flag's recorded type (engine/vllm/flexible.py), None where argparse's is vLLM's."""
    return flexible.flag_converter(flag.type, flag.label)


def args_line(text: str) -> str | None:
    """The `{...}` of the first `non-default args: {...}` line (entrypoints/utils.py::log_non_default_args), or None.
    One pass: each marker is looked at once and the search goes on after its line."""
    start = text.find(ARGS_MARKER)
    while start >= 0:
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        opened, closed = text.find("{", start, end), text.rfind("}", start, end)
        if opened == start + len(ARGS_MARKER) and closed > opened:
            return text[opened:closed + 1]
        start = text.find(ARGS_MARKER, end)
    return None


def parse_command(text: str, version: str = VERSION) -> VllmCommand:
    """A vLLM server command line, parsed by the release's parser; BadInput names what is wrong (argparse's
    wording, `vllm serve: error:`)."""
    if len(text) > MAX_COMMAND_CHARS:
        raise BadInput(f"launch command: {len(text):,} characters, over the {MAX_COMMAND_CHARS:,}-character bound")
    logged = args_line(text)
    if logged is not None:
        return parse_non_default_args(logged, version)
    try:
        words = shlex.split(text.replace("\\\r\n", " ").replace("\\\n", " "), comments=True)
    except ValueError as exc:
        raise BadInput(f"cannot split the launch command: {exc}") from None
    if len(words) > MAX_ARGS:
        raise BadInput(f"launch command: {len(words):,} words, over the bound of {MAX_ARGS:,} (repeated flags "
                       "included; no launch needs more)")
    tokens, env = list(words), []
    while tokens and _ENV.match(tokens[0]):
        key, _, value = tokens.pop(0).partition("=")
        env.append((key, value))
    head = [tokens[0].rsplit("/", 1)[-1], *tokens[1:]] if tokens else []
    prog = next((p for p in _PROGRAMS if tuple(head[:len(p)]) == p
                 or (p[0].startswith("python") and head[:1] and head[0].startswith("python")
                     and tuple(head[1:len(p)]) == p[1:])), None)
    if prog is None:
        raise BadInput("not a vLLM server command (expected `vllm serve MODEL ...` or "
                       "`python -m vllm.entrypoints.openai.api_server ...`)")
    reg = registry(version)
    try:
        argv = flexible.rewrite(tokens[len(prog):])
        if prog[0] == "vllm" and argv and not argv[0].startswith("-"):
            argv = ["--model", argv[0], *argv[1:]]  # entrypoints/cli/serve.py::cmd: model_tag wins over --model
        parsed = parse_argv(reg, tuple(argv), _type_of)
    except BadInput as exc:
        # one line: a value typed with a newline in it is echoed escaped
        raise BadInput(f"{reg.prog}: error: {exc.message}".replace("\n", "\\n")) from None
    return VllmCommand(values=bounded(parsed.values, reg), env=tuple(env),
                       tokens=tuple(flexible.flag_key(t) for t in words))


def bounded(values: dict[str, Any], reg: FlagRegistry) -> dict[str, Any]:
    """The values, each number of the type the release holds it in (every item of a list), finite and inside the
    range hybridplan sizes from; every number inside a JSON value finite and int64. BadInput names the flag."""
    for dest, value in values.items():
        if value is None:
            continue
        flag = reg.flag_for(dest)
        field = reg.option_for(dest)
        if flag.type in _INT_TYPES or flag.type == "float":
            for item in value if isinstance(value, list) else [value]:
                numbers.check(item, field, BOUNDS.get(dest), integer=flag.type in _INT_TYPES)
        else:
            numbers.finite_tree(value, field)
    return values


def parse_non_default_args(text: str, version: str = VERSION) -> VllmCommand:
    """The `non-default args: {...}` dict a vLLM boot log prints (entrypoints/utils.py::log_non_default_args): a
    Python literal of the values that differ from the defaults, each held to the type and range the release's
    parser would have given it."""
    if len(text) > MAX_COMMAND_CHARS:
        raise BadInput(f"non-default args: {len(text):,} characters, over the {MAX_COMMAND_CHARS:,}-character bound")
    try:
        raw = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise BadInput("non-default args: not a Python dict literal") from None
    if not isinstance(raw, dict):
        raise BadInput("non-default args: not a dict")
    reg = registry(version)
    values: dict[str, Any] = {}
    for key, value in raw.items():
        dest = "model" if key == "model_tag" else str(key)
        if dest not in reg.by_dest:
            raise BadInput(f"non-default args: {str(key)[:64]!r} is not a vLLM {version} argument")
        values[dest] = value
    return VllmCommand(values=bounded(values, reg), source="non-default-args")
