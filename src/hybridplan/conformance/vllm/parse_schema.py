"""The vLLM parser driver's wire format (vllm/parse_driver.py): what it reads (an argv to parse, or the ask for the
release's flag records) and what it writes back (a header line, then one answer an input), checked field by field on
both sides of the process boundary, as vllm/schema.py checks the planning driver's.

Runs inside the oracle interpreter too (standard library and the neutral checker, wire.py, only: see launch.py).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

# relative: the oracle interpreter imports this package as launch.py's private package, not as hybridplan's
from ..wire import SchemaError, checked

__all__ = ["SchemaError", "header", "request", "result"]


class Argv(TypedDict):
    """A `vllm serve` argv (the model first) to parse."""

    id: str
    argv: list[str]


class FlagsAsk(TypedDict):
    """The ask for the release's flag records (scripts/gen_vllm_flag_registry.py writes the registry from them)."""

    id: str
    flags: Literal[True]


Request = Argv | FlagsAsk


class _HeaderFields(TypedDict):
    header: Literal[True]
    engine: Literal["vllm"] | None  # None: the interpreter has no usable vLLM parser (then `error` says why)


class Header(_HeaderFields, total=False):
    """The driver's first line."""

    version: str
    python: str
    error: str


class ParseError(TypedDict):
    """Why the parse ended: `argparse` and its message (after `vllm serve: error: `), or the exception a type or
    the release's own code raised and its text."""

    type: str
    message: str


class Parsed(TypedDict):
    """Every value that differs from the parser's default (the positional model as `model`; a dataclass-typed flag
    as the JSON object the release validated)."""

    id: str
    parsed: dict[str, Any]


class Refused(TypedDict):
    id: str
    error: ParseError


class Flags(TypedDict):
    """The release's `vllm serve` parser, action by action (conformance/flag_record.py's records, with the hidden
    `aliases` and a boolean's `negatives`)."""

    id: str
    allow_abbrev: bool
    flags: list[dict[str, Any]]


Result = Parsed | Refused | Flags


def request(obj: object) -> Request:
    """`obj` as an Argv, or as a FlagsAsk when it carries `flags`; SchemaError names the field."""
    if isinstance(obj, dict) and "flags" in obj:
        return checked(FlagsAsk, obj, "vLLM parser request")
    return checked(Argv, obj, "vLLM parser request")


def header(obj: object) -> Header:
    """`obj` as the driver's Header, or SchemaError naming the field."""
    return checked(Header, obj, "vLLM parser header")


def result(obj: object) -> Result:
    """`obj` as a Refused when it carries `error`, Flags when it carries `flags`, else Parsed."""
    where = f"vLLM parser result {obj.get('id')!r}" if isinstance(obj, dict) else "vLLM parser result"
    if isinstance(obj, dict) and "error" in obj:
        return checked(Refused, obj, where)
    if isinstance(obj, dict) and "flags" in obj:
        return checked(Flags, obj, where)
    return checked(Parsed, obj, where)
