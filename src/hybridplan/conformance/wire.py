"""The oracle boundary's runtime check: a JSON value against a TypedDict (lists, dicts, Literals, unions, plain types),
refused with a one-line SchemaError naming the field (`groups[1].layers: expected int, got str`).

Both engines' schemas check what their driver reads and writes with it, on both sides of the process boundary: it
runs in the oracle interpreter too (standard library only, see launch.py).
"""

from __future__ import annotations

import types
import typing
from functools import lru_cache
from typing import Any, Literal, TypeVar, Union

T = TypeVar("T")


class SchemaError(ValueError):
    """A value of the wrong shape at the oracle boundary; the message names the field, on one line."""


def checked(kind: type[T], obj: object, where: str) -> T:
    """`obj` as a `kind`, or SchemaError "<where>: <field>: <what is wrong>"."""
    try:
        _check(kind, obj, "")
    except SchemaError as exc:
        raise SchemaError(f"{where}: {exc}") from None
    return typing.cast(T, obj)


def _check(kind: Any, value: object, path: str) -> None:
    """Raise SchemaError unless `value` is a JSON value of type `kind` (a TypedDict, list, dict, Literal, union or
    plain type: bool is no int); `path` names where it sits."""
    if kind is Any:
        return
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if typing.is_typeddict(kind):
        _check_record(kind, value, path)
    elif origin is Literal:
        if value not in args or isinstance(value, bool) != any(isinstance(a, bool) for a in args):
            _fail(path, _expected(kind), value)
    elif origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if value is None and len(options) < len(args):
            return
        for option in options:
            try:
                return _check(option, value, path)
            except SchemaError:
                if len(options) == 1 and isinstance(value, (dict, list)):
                    raise  # X | None holding an X that is wrong inside: X's own complaint names the field
        _fail(path, " or ".join(_expected(a) for a in args), value)
    elif origin is list:
        if not isinstance(value, list):
            _fail(path, _expected(kind), value)
        for i, item in enumerate(value):
            _check(args[0], item, f"{path}[{i}]")
    elif origin is dict:
        if not isinstance(value, dict):
            _fail(path, _expected(kind), value)
        for key, item in value.items():
            _check(args[1], item, _join(path, str(key)))
    elif kind is type(None):
        if value is not None:
            _fail(path, _expected(kind), value)
    elif not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        _fail(path, _expected(kind), value)


def _expected(kind: Any) -> str:
    """How an error names a type: int, 'a' or 'b', a list, an object (Plan), null."""
    origin = typing.get_origin(kind)
    if kind is type(None):
        return "null"
    if origin is Literal:
        return " or ".join(repr(a) for a in typing.get_args(kind))
    if origin is list:
        return "a list"
    if origin is dict:
        return "an object"
    if typing.is_typeddict(kind):
        return f"an object ({kind.__name__})"
    return str(getattr(kind, "__name__", kind))


def _check_record(kind: Any, value: object, path: str) -> None:
    if not isinstance(value, dict):
        _fail(path, _expected(kind), value)
    hints = _hints(kind)
    for key in sorted(kind.__required_keys__):
        if key not in value:
            raise SchemaError(f"{_join(path, key)}: missing")
    for key, item in value.items():
        if key not in hints:
            raise SchemaError(f"{_join(path, str(key))}: not a field of {kind.__name__}")
        _check(hints[key], item, _join(path, key))


@lru_cache(maxsize=None)
def _hints(kind: Any) -> dict[str, Any]:
    """A TypedDict's field types, evaluated once."""
    return typing.get_type_hints(kind)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _fail(path: str, expected: str, value: object) -> typing.NoReturn:
    raise SchemaError(f"{path or 'value'}: expected {expected}, got {type(value).__name__}")
