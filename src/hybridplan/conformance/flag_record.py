"""An argparse action recorded as the flag registries hold it (engine/<engine>/flags.json, read by engine/registry.py):
its option strings, kind, nargs, type and choices by name, default and const as JSON (else their repr), deprecation,
help (cut to HELP_MAX characters) and whether it is required.

Runs in the oracle interpreter (standard library only, see launch.py): scripts/gen_flag_registry.py records sglang's
parser with it, vllm/parse_driver.py each vLLM release's.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterable
from typing import Any

HELP_MAX = 300
_KINDS: dict[type, str] = {
    argparse._StoreAction: "value",
    argparse._StoreTrueAction: "store_true",
    argparse._StoreFalseAction: "store_false",
    argparse._StoreConstAction: "store_const",
    argparse.BooleanOptionalAction: "bool_optional",
    argparse._AppendAction: "append",
    argparse._AppendConstAction: "append_const",
    argparse._CountAction: "count",
    argparse._ExtendAction: "extend",
}
_TYPE_NAMES: dict[Any, str] = {str: "str", int: "int", float: "float", bool: "bool"}


def _kind(action: argparse.Action) -> str:
    kind = _KINDS.get(type(action))
    return kind if kind is not None else type(action).__name__.lower()


def type_name(fn: object) -> str | None:
    """An argument type by what it is called (a partial by the function it wraps)."""
    if fn is None:
        return None
    if fn in _TYPE_NAMES:
        return _TYPE_NAMES[fn]
    name = getattr(fn, "__name__", None)
    if name is None and hasattr(fn, "func"):  # functools.partial
        wrapped = getattr(fn, "func")  # any object: not typed as a partial
        name = f"partial({getattr(wrapped, '__name__', type(wrapped).__name__)})"
    return name if name is not None else type(fn).__name__


def plain(value: Any) -> Any:
    """Return a JSON value, or raise TypeError/ValueError if there is none."""
    if isinstance(value, (set, frozenset)):
        raise TypeError("unordered")
    json.dumps(value, allow_nan=False)
    return value


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _choices(choices: Iterable[Any] | None) -> list[Any] | None:
    if choices is None:
        return None
    items = [_scalar(c) for c in choices]
    return sorted(items, key=lambda c: (type(c).__name__, c))


def _help(text: str | None) -> str | None:
    if text is None:
        return None
    return re.sub(r"\s+", " ", text).strip()[:HELP_MAX]


def _deprecated(action: argparse.Action) -> dict[str, Any] | None:
    info = {}
    for attr in ("new_flag", "const_value", "error_message"):
        if hasattr(action, attr):
            value = getattr(action, attr)
            if value is not None:
                info[attr] = _scalar(value)
    if not info and not type(action).__name__.startswith("Deprecated"):
        return None
    return info


def record(action: argparse.Action) -> dict[str, Any]:
    """The action's registry record (JSON-plain)."""
    try:
        default, default_repr = plain(action.default), False
    except (TypeError, ValueError):
        default, default_repr = repr(action.default), True
    try:
        const = plain(action.const)
    except (TypeError, ValueError):
        const = repr(action.const)
    return {
        "dest": action.dest,
        "options": list(action.option_strings),
        "kind": _kind(action),
        "nargs": action.nargs,
        "type": type_name(action.type),
        "choices": _choices(action.choices),
        "default": default,
        "default_repr": default_repr,
        "const": const,
        "deprecated": _deprecated(action),
        "help": _help(action.help),
        "required": bool(action.required),
    }
