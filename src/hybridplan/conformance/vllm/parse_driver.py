"""Engine side of the vLLM parser conformance: each argv read by the release's own `vllm serve` parser (its
FlexibleArgumentParser built by make_arg_parser, on CPU with the planning driver's stand-ins, vllm/driver.py), and
the parser itself recorded action by action.

Executed by the oracle interpreter, never imported by hybridplan: `python launch.py vllm.parse_driver < requests.jsonl`.
The first output line is a header naming the release; then, per input (parse_schema.py checks each on the way in and
out), for `{"id", "argv"}` `{"id", "parsed"}` (every value that differs from the parser's default, the positional
model as `model`) or `{"id", "error"}` (argparse's message, or the exception a type raised); for `{"id", "flags"}`
the parser's flag records (conformance/flag_record.py's, plus `aliases`, the option strings argparse takes for an
action but its help hides, such as EnableDisableAction's `--no-enable-x`, and `negatives`, a boolean action's option
strings that set it False; vLLM's argument types are named by what they parse: `optional_type(int)` and
`parse_type(json.loads)` by the function they wrap, its own `human_readable_int(_or_auto)`, which is not sglang's,
with a `vllm_` prefix). A dataclass-typed flag (parse_dataclass: `--compilation-config`, ...) is answered with the
JSON object the release validated, after its own _expand_json_human_readable_numbers, since the dataclass it builds
holds every default too; the release's validation still runs and may refuse.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

# relative: the oracle interpreter imports this package as launch.py's private package (it has no hybridplan)
from .. import flag_record
from . import driver as planning
from . import parse_schema as schema

if TYPE_CHECKING:
    from .parse_schema import Header, Result


class Refused(Exception):
    """argparse's error(message), raised instead of printing the usage and exiting."""


def _type_name(fn: object) -> str | None:
    """A vLLM argument type by what it parses (its wrappers by the function they wrap)."""
    inner = getattr(fn, "__closure__", None)
    if getattr(fn, "__name__", "") in ("_optional_type", "_parse_type") and inner:
        return _type_name(inner[0].cell_contents)
    if getattr(fn, "__name__", "") in ("human_readable_int", "human_readable_int_or_auto"):
        return f"vllm_{getattr(fn, '__name__', '')}"
    return flag_record.type_name(fn)


def _hidden_and_negative(parser: Any, action: argparse.Action) -> tuple[list[str], list[str]]:
    """The option strings argparse takes for `action` beyond its (help-visible) options, and those that set a
    boolean action False (EnableDisableAction keeps them in negative_option_strings; BooleanOptionalAction: --no-)."""
    taken = [s for s, a in parser._option_string_actions.items() if a is action]
    hidden = sorted(s for s in taken if s not in action.option_strings)
    if not isinstance(action, argparse.BooleanOptionalAction):
        return hidden, []
    negative = getattr(action, "negative_option_strings", None)
    if negative is None:
        negative = [s for s in taken if s.startswith("--no-")]
    return hidden, sorted(s for s in taken if s in negative)


def flag_records(parser: Any) -> list[dict[str, Any]]:
    """Every action of the parser with an option string (and the positional model), by dest then first option."""
    flags = []
    for action in parser._actions:
        if not action.option_strings and action.dest != "model_tag":
            continue
        rec = flag_record.record(action)
        rec["type"] = _type_name(action.type)
        rec["aliases"], rec["negatives"] = _hidden_and_negative(parser, action)
        flags.append(rec)
    flags.sort(key=lambda f: (f["dest"], f["options"][0] if f["options"] else ""))
    return flags


def _recording(parser: Any) -> dict[str, str]:
    """Wrap each dataclass-typed flag's type so the text it validated is kept by dest (the type still runs)."""
    seen: dict[str, str] = {}
    for action in parser._actions:
        real = action.type
        if getattr(real, "__name__", "") != "parse_dataclass":
            continue

        def wrapped(text: str, real: Any = real, dest: str = action.dest) -> Any:
            out = real(text)
            seen[dest] = text
            return out

        wrapped.__name__ = real.__name__
        action.type = wrapped
    return seen


def _plain(value: Any) -> Any:
    """A value as JSON carries it (anything else by its repr)."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return repr(value)


def parse(parser: Any, seen: dict[str, str], expand: Any, sid: str, argv: list[str]) -> Result:
    """The release's reading of `argv`: the values that differ from the defaults, or why it refused."""
    seen.clear()
    try:
        ns = parser.parse_args(argv)
    except Refused as exc:
        return {"id": sid, "error": {"type": "argparse", "message": str(exc)}}
    except Exception as exc:  # noqa: BLE001 - a type's own exception is the release's answer too
        return {"id": sid, "error": {"type": type(exc).__name__, "message": str(exc)}}
    parsed = {}
    for dest, value in vars(ns).items():
        if value == parser.get_default(dest):
            continue
        key = "model" if dest == "model_tag" else dest
        parsed[key] = json.loads(expand(seen[dest])) if dest in seen else _plain(value)
    return {"id": sid, "parsed": parsed}


def _emit(obj: Header | Result) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    try:
        vllm = planning.prepare()
        parser = planning.serve_parser()
        from vllm.engine.arg_utils import _expand_json_human_readable_numbers as expand
    except Exception as exc:  # noqa: BLE001 - the header says why there is no engine
        _emit({"header": True, "engine": None, "error": f"{type(exc).__name__}: {exc}"})
        return
    flags = flag_records(parser)  # before _recording wraps the dataclass-typed flags' types

    def refuse(message: str) -> None:
        raise Refused(message)

    parser.error = refuse
    seen = _recording(parser)
    _emit(schema.header({"header": True, "engine": "vllm", "version": str(vllm.__version__),
                         "python": sys.version.split()[0]}))
    for line in sys.stdin:
        if not line.strip():
            continue
        ask = schema.request(json.loads(line))
        if "flags" in ask:
            out: Result = {"id": ask["id"], "allow_abbrev": bool(parser.allow_abbrev), "flags": flags}
        else:
            out = parse(parser, seen, expand, ask["id"], list(ask["argv"]))
        _emit(schema.result(json.loads(json.dumps(out))))


if __name__ == "__main__":
    main()
