"""One bounded reader for every number hybridplan takes from an engine's own text: a boot-log line, a pasted
`non-default args:` line, a JSON-valued flag. Each is finite, of the type the engine holds it in, inside its bound,
or a one-line BadInput naming the field; digits are counted before any conversion, so no text can make Python's
int() or float() slow, raise, or turn into an infinity."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from hybridplan.errors import BadInput
from hybridplan.limits import MAX_INT

MAX_NUMBER_CHARS = 40  # a number as an engine prints it: int64 has 19 digits, a float's repr 17 significant ones
# bounded repeats only (read() caps the text first): an optional sign, digits with optional thousands commas (as
# vLLM logs token counts: `569,878`), an optional fraction
_INTEGER = re.compile(r"-?(?:\d{1,3}(?:,\d{3}){1,12}|\d{1,40})")
_DECIMAL = re.compile(r"-?(?:\d{1,3}(?:,\d{3}){1,12}|\d{1,40})(?:\.\d{1,40})?")


@dataclass(frozen=True)
class Bound:
    """The range hybridplan accepts for a number (lo None: no lower bound), with why."""

    lo: float | None
    hi: float
    why: str
    lo_open: bool = False  # the value must be strictly above `lo`

    def admits(self, value: float) -> bool:
        above = self.lo is None or (value > self.lo if self.lo_open else value >= self.lo)
        return above and value <= self.hi

    def text(self) -> str:
        hi = _number(self.hi)
        if self.lo is None:
            return f"at most {hi}"
        return f"above {_number(self.lo)} and at most {hi}" if self.lo_open else f"{_number(self.lo)}..{hi}"


def _number(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else f"{x:,}"


ANY_INT = Bound(-MAX_INT - 1, MAX_INT, "the engine passes integers to torch and C++ as int64")


def _shown(text: str) -> str:
    """The offending text, short and on one line."""
    return repr(text if len(text) <= MAX_NUMBER_CHARS else text[:MAX_NUMBER_CHARS] + "...")


def _value(value: int | float) -> str:
    """A number as a message shows it: its repr, or its size when that is long (str() of an int past 4,300 digits
    raises)."""
    if isinstance(value, int) and value.bit_length() > 128:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    return repr(value)


def read(text: str, field: str, bound: Bound, *, integer: bool) -> int | float:
    """The number `text` spells (thousands commas allowed), as an int or a float; BadInput naming `field` when it is
    not one, is longer than MAX_NUMBER_CHARS, or lies outside `bound`."""
    what = "an integer" if integer else "a number"
    if len(text) > MAX_NUMBER_CHARS:
        raise BadInput(f"{field}: {_shown(text)} is not {what} of at most {MAX_NUMBER_CHARS} characters")
    if (_INTEGER if integer else _DECIMAL).fullmatch(text) is None:
        raise BadInput(f"{field}: {_shown(text)} is not {what}")
    plain = text.replace(",", "")
    return check(int(plain) if integer else float(plain), field, bound, integer=integer)


def check(value: object, field: str, bound: Bound | None, *, integer: bool) -> int | float:
    """A value already parsed (a Python literal, a JSON number): finite, an int where the engine holds an int (a bool
    is not one), inside `bound` (ints: int64 when no bound is given); BadInput naming `field` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadInput(f"{field}: {_shown(repr(value))} is not {'an integer' if integer else 'a number'}")
    if isinstance(value, float) and not math.isfinite(value):
        raise BadInput(f"{field}: {value!r} is not a finite number")
    if integer and not isinstance(value, int):
        raise BadInput(f"{field}: {value!r} is not an integer")
    bound = bound or (ANY_INT if isinstance(value, int) else None)
    if bound is not None and not bound.admits(value):
        raise BadInput(f"{field}: {_value(value)} is outside {bound.text()} ({bound.why})")
    return value


def finite_tree(value: Any, field: str) -> None:
    """Every number inside a parsed JSON or Python value (dicts, lists) finite and every int within int64; BadInput
    names the first offender by its path (`speculative_config.x`). Iterative: a deep value costs no recursion."""
    stack: list[tuple[str, Any]] = [(field, value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((f"{path}.{k}"[:200], v) for k, v in reversed(list(node.items())))
        elif isinstance(node, (list, tuple)):
            stack.extend((f"{path}[{i}]"[:200], v) for i, v in reversed(list(enumerate(node))))
        elif isinstance(node, (int, float)) and not isinstance(node, bool):
            check(node, path, None, integer=isinstance(node, int))
