"""JSON from a user's file with its nesting and its integers bounded, so neither Python's recursion limit nor its
int-conversion limit ever surfaces as a traceback: every refusal is one line naming the file and, for a number, the
field."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from hybridplan.errors import BadInput
from hybridplan.limits import MAX_INT, MAX_JSON_DEPTH

_LONG = re.compile(r"\d{19}")  # a literal this long may pass MAX_INT (19 digits); shorter ones never do
_INT_DIGITS = len(str(MAX_INT))


class _Oversized:
    """An integer literal past the bound, left unconverted so the walk can name the field that holds it."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def why(self) -> str:
        return f"an integer of {self.digits:,} digits, outside the int64 range (at most {MAX_INT:,})"


class _NonFinite:
    """A NaN or infinite number (`NaN`, `-Infinity`, `1e999`), left as text so the walk can name its field."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal

    def why(self) -> str:
        return f"{self.literal[:40]} is not a finite number (JSON has no NaN or Infinity)"


def _finite_float(literal: str) -> float | _NonFinite:
    value = float(literal)
    return value if math.isfinite(value) else _NonFinite(literal)


def _bounded_int(literal: str) -> int | _Oversized:
    """json's parse_int hook: digits counted before int() runs (int() of 5,000 digits raises, of 10^6 is slow)."""
    digits = len(literal.lstrip("-"))
    if digits > _INT_DIGITS:
        return _Oversized(digits)
    value = int(literal)
    return value if abs(value) <= MAX_INT else _Oversized(digits)


def parse_json(text: str, *, origin: str, what: str, depth: int = MAX_JSON_DEPTH,
               error: type[BadInput] = BadInput, finite: bool = False) -> Any:
    """`text` parsed as JSON. Nesting deeper than `depth` and integers outside int64 (the engine hands integers to
    torch and C++ as int64) are refused; with `finite`, so are NaN, Infinity and floats past the double range (a
    JSON-valued flag: the answer must stay JSON); `what` names the kind of text in the message ("config.json")."""
    hook = _bounded_int if _LONG.search(text) else None  # the hook costs a call per integer: only when one may be long
    hooks: dict[str, Any] = {"parse_constant": _NonFinite, "parse_float": _finite_float} if finite else {}
    try:
        data = json.loads(text, parse_int=hook, **hooks)
    except json.JSONDecodeError as exc:
        raise error(f"{origin}: malformed {what}: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:  # the parser recurses per level; far past `depth` it gives up
        raise error(f"{origin}: {what} nests deeper than {depth} levels") from None
    if _deeper_than(data, depth):
        raise error(f"{origin}: {what} nests deeper than {depth} levels")
    if hook is not None or finite:
        found = _refused(data)
        if found is not None:
            field, value = found
            raise error(f"{origin}: `{field}`: {value.why()}")
    return data


def _children(node: Any) -> list[tuple[str | int, Any]]:
    if isinstance(node, dict):
        return list(node.items())
    return list(enumerate(node)) if isinstance(node, list) else []


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether parsed JSON nests deeper than `limit`: level by level over the containers (iterative, so any depth
    the parser returned is safe to measure; a whole level per step keeps a 100k-tensor header cheap)."""
    level, depth = [value] if isinstance(value, (dict, list)) else [], 0
    while level:
        depth += 1
        if depth > limit:
            return True
        nxt: list[Any] = []
        for node in level:
            nxt += [c for c in (node.values() if isinstance(node, dict) else node) if isinstance(c, (dict, list))]
        level = nxt
    return False


def _refused(value: Any) -> tuple[str, _Oversized | _NonFinite] | None:
    """The path (`a.b[0]`) of the first number a hook refused, in document order, and the refused number."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, (_Oversized, _NonFinite)):
            return path.lstrip(".")[:200] or "(the value)", node
        kids = _children(node)
        stack.extend((f"{path}[{k}]" if isinstance(k, int) else f"{path}.{k}", c) for k, c in reversed(kids))
    return None


def _non_finite(value: Any) -> str | None:
    """The path (`a.b[0]`) of the first NaN or infinity in a value about to be written as JSON, in document order."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return path.lstrip(".")[:200] or "(the value)"
        kids = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) \
            if isinstance(node, (list, tuple)) else []
        stack.extend((f"{path}[{k}]" if isinstance(k, int) else f"{path}.{k}", c) for k, c in reversed(kids))
    return None


def dumps(value: Any, *, indent: int | None = None) -> str:
    """`value` as JSON as the CLI and the web answer it (what is not JSON by its str()), never with NaN or Infinity,
    which are not JSON: BadInput names the field holding one (a last guard: every engine number is bounded first)."""
    try:
        return json.dumps(value, indent=indent, default=str, allow_nan=False)
    except ValueError:
        where = _non_finite(value)
        if where is None:
            raise
        raise BadInput(f"output: `{where}` is not a finite number (JSON has no NaN or Infinity)") from None
