"""The SGLang oracle driver's wire format: the scenario it reads (one JSON object a line) and what it writes back (a
header line, then one result a scenario).

sglang/driver.py runs inside the engine's own interpreter, on the engine's untyped modules, so mypy checks it with
its default settings only; these types are its typed boundary: the driver declares them on what it reads and writes,
and the strict side (runner, match, compare, model_side) reads nothing else, each line checked on the way in
(wire.py: a value of the wrong shape is refused with a SchemaError naming the field).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

# relative: the oracle interpreter imports this package as launch.py's private package, not as hybridplan's
from ..wire import checked

# the compared sections of a result; each maps a field name to a JSON-plain value (enums and dtypes by name)
Section = Literal["resolved", "geometry", "kv", "sizing"]
SECTIONS: tuple[Section, ...] = ("resolved", "geometry", "kv", "sizing")


class ScenarioPayload(TypedDict):
    """One scenario as the driver reads it (sglang/scenarios.py: Scenario.payload)."""

    id: str
    argv: list[str]  # the engine's flags (after the launcher), --model-path first
    env: dict[str, str]
    available_gib: float | None  # free memory when the KV pool is sized; None: no sizing
    pre_load_gib: float | None  # pre_model_load_memory
    record_len: int  # ReplaySSM ring length
    gpu_mib: int  # the stand-in GPU's memory.total


class _HeaderFields(TypedDict):
    header: Literal[True]
    engine: str | None  # "sglang", or None where the interpreter has no usable engine (then `error` says why)


class Header(_HeaderFields, total=False):
    """The driver's first line."""

    version: str
    gpu_mib: int
    python: str
    error: str


class _ErrorFields(TypedDict):
    stage: str  # parse | resolve | model | kv | sizing | pool | driver (and `missing` for a scenario with no line)
    type: str  # the exception's class name (hybridplan's side: the refusal kind)
    message: str


class OracleError(_ErrorFields, total=False):
    """Why a scenario stopped; hybridplan's side also names the rule that refused."""

    rule: str


class _ResultFields(TypedDict):
    id: str


class Result(_ResultFields, total=False):
    """One scenario's outcome: the sections reached before a refusal (`error`), each field by field."""

    error: OracleError
    resolved: dict[str, Any]  # the resolved arguments (the driver's RESOLVED_FIELDS, attention TP/DP, PP size)
    geometry: dict[str, Any]  # ModelConfig and mamba2_cache_params: shapes, layer ids, bytes per request, dtypes
    kv: dict[str, Any]  # the KV dtype and the per-stage cells (target, with the draft folded in)
    sizing: dict[str, Any]  # S, K, the branch that set K, the KV budget, tokens and max running requests


def header(obj: object) -> Header:
    """`obj` as the driver's Header, or SchemaError naming the field."""
    return checked(Header, obj, "SGLang oracle header")


def result(obj: object) -> Result:
    """`obj` as a Result, or SchemaError naming the field."""
    where = f"SGLang oracle result {obj.get('id')!r}" if isinstance(obj, dict) else "SGLang oracle result"
    return checked(Result, obj, where)
