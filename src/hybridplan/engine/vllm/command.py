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

from hybridplan.engine.registry import Bound, FlagRegistry, parse_argv, registry_from_json, rewind
from hybridplan.engine.vllm.behaviours import NEWEST, RELEASES
from hybridplan.errors import BadInput
from hybridplan.limits import MAX_COMMAND_CHARS, MAX_CONTEXT, MAX_PARALLEL, MAX_REQUESTS

VERSION = NEWEST.version  # the newest modelled release (flags.json); older ones rewind flag_history.json
_PROGRAMS = (("vllm", "serve"), ("python", "-m", "vllm.entrypoints.openai.api_server"),
             ("python3", "-m", "vllm.entrypoints.openai.api_server"))
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_NON_DEFAULT = re.compile(r"non-default args: (\{.*\})")


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


@lru_cache(maxsize=8)
def registry(version: str = VERSION) -> FlagRegistry:
    """The release's `vllm serve` parser recorded by scripts/gen_vllm_flag_registry.py: flags.json for the newest,
    rewound through flag_history.json for an older one (a release whose parser is its predecessor's has an empty
    step)."""
    return registry_from_json(rewind(_json("flags.json"), _json("flag_history.json")["releases"], tuple(RELEASES),
                                     version))


def _flag_token(tok: str) -> str:
    """utils/argparse_utils.py::FlexibleArgumentParser.parse_args: `--max_model_len` is `--max-model-len`."""
    if not tok.startswith("--"):
        return tok
    opt, eq, val = tok.partition("=")
    return opt.replace("_", "-") + eq + val


def parse_command(text: str, version: str = VERSION) -> VllmCommand:
    """A vLLM server command line, parsed by the release's parser; BadInput names what is wrong (argparse's
    wording, `vllm serve: error:`)."""
    if len(text) > MAX_COMMAND_CHARS:
        raise BadInput(f"launch command: {len(text):,} characters, over the {MAX_COMMAND_CHARS:,}-character bound")
    match = _NON_DEFAULT.search(text)
    if match:
        return parse_non_default_args(match.group(1), version)
    try:
        tokens = [_flag_token(t) for t in shlex.split(re.sub(r"\\\r?\n", " ", text), comments=True)]
    except ValueError as exc:
        raise BadInput(f"cannot split the launch command: {exc}") from None
    shell = tuple(tokens)
    env = []
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
    argv = tokens[len(prog):]
    argv = ["-1" if a == "auto" and i and argv[i - 1] == "--max-model-len" else a for i, a in enumerate(argv)]
    if prog[0] == "vllm" and argv and not argv[0].startswith("-"):
        argv = ["--model", argv[0], *argv[1:]]  # entrypoints/cli/serve.py::cmd: model_tag wins over --model
    reg = registry(version)
    try:
        parsed = parse_argv(reg, tuple(argv))
    except BadInput as exc:
        # one line: a value typed with a newline in it is echoed escaped
        raise BadInput(f"{reg.prog}: error: {exc.message}".replace("\n", "\\n")) from None
    values = dict(parsed.values)
    for dest, spelled in parsed.spelled.items():
        if reg.flag_for(dest).kind in ("enabledisableaction", "bool_optional"):  # EnableDisableAction (0.33.0),
            # argparse.BooleanOptionalAction (0.24.0): --disable-X / --no-X is False
            values[dest] = not spelled.startswith("--disable-") and not spelled.startswith("--no-")
    return VllmCommand(values=_bounded(values, reg), env=tuple(env), tokens=shell)


def _bounded(values: dict[str, Any], reg: FlagRegistry) -> dict[str, Any]:
    """The values, each inside the range hybridplan sizes from; BadInput names the flag."""
    for dest, bound in BOUNDS.items():
        value = values.get(dest)
        if value is None or isinstance(value, bool):
            continue
        if not isinstance(value, (int, float)) or not bound.admits(value):
            raise BadInput(f"{reg.option_for(dest)}: {value!r} is outside {bound.text()} ({bound.why})")
    return values


def parse_non_default_args(text: str, version: str = VERSION) -> VllmCommand:
    """The `non-default args: {...}` dict a vLLM boot log prints (entrypoints/utils.py::log_non_default_args)."""
    try:
        raw = ast.literal_eval(text)
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        raise BadInput("non-default args: not a Python dict literal") from None
    if not isinstance(raw, dict):
        raise BadInput("non-default args: not a dict")
    reg = registry(version)
    values: dict[str, Any] = {}
    for key, value in raw.items():
        dest = "model" if key == "model_tag" else str(key)
        if dest not in reg.by_dest:
            raise BadInput(f"non-default args: {key!r} is not a vLLM {version} argument")
        values[dest] = value
    return VllmCommand(values=_bounded(values, reg), source="non-default-args")
