"""Plain data (what JSON holds) as a JavaScript literal laid out the way prettier lays out the docs' modules, so what
`cookbook export --format sglang-jsx` adds to a module reads like the code around it and a reviewer's diff shows
one value per line.

The docs tree formats with prettier's defaults (docs/roundtrip.md): 80 columns, two-space indent, double quotes
unless a string holds more double than single quotes, keys unquoted where they may be, trailing commas. A value
stays on its line when it fits; otherwise an object or array opens one entry per line (an array of numbers fills
its lines), an array of two or more objects (or arrays) with two or more entries each always does, and a string
too long for its property's line moves below the key when the key is not short. A text prettier leaves unchanged
is what this writes (checked against prettier 3.10.1 in tests/cookbook/test_docs_pretty.py).
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

WIDTH = 80  # prettier's printWidth
SHORT_KEY = 5  # a key narrower than tabWidth + 3 keeps a long string on its line (prettier's "short key")
_SIMPLE_NUMBER = re.compile(r"(?:0|[1-9]\d{0,14})(?:\.\d*[1-9])?")


def width(text: str) -> int:
    """Columns a text takes (East Asian wide characters take two, as prettier counts them)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def string(s: str) -> str:
    """A string literal: double-quoted unless the text holds more double quotes than single ones."""
    body = json.dumps(s, ensure_ascii=False)[1:-1]
    if s.count('"') > s.count("'"):
        return "'" + body.replace('\\"', '"').replace("'", "\\'") + "'"
    return '"' + body + '"'


def _number(v: int | float) -> str:
    text = json.dumps(v)
    return re.sub(r"e\+?(-?)0*(\d)", r"e\1\2", text)  # 1e-05 -> 1e-5, 1e+21 -> 1e21


def key(k: str) -> str:
    """A property key, unquoted where JavaScript allows it (an identifier or a simple number)."""
    return k if k.replace("$", "_").isidentifier() or _SIMPLE_NUMBER.fullmatch(k) else string(k)


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return _number(v)
    if isinstance(v, str):
        return string(v)
    raise TypeError(f"not plain data: {type(v).__name__}")


def _always_breaks(items: list[Any]) -> bool:
    """Two or more objects (or arrays) of two or more entries each: one per line, whatever the width."""
    return len(items) > 1 and (all(isinstance(x, dict) and len(x) > 1 for x in items)
                               or all(isinstance(x, list) and len(x) > 1 for x in items))


def _flat(v: Any) -> str | None:
    """The value on one line (None where it never is)."""
    if isinstance(v, dict):
        parts = [(key(k), _flat(x)) for k, x in v.items()]
        if any(f is None for _, f in parts):
            return None
        return "{ " + ", ".join(f"{k}: {f}" for k, f in parts) + " }" if parts else "{}"
    if isinstance(v, list):
        items = [_flat(x) for x in v]
        if _always_breaks(v) or any(f is None for f in items):
            return None
        return "[" + ", ".join(str(f) for f in items) + "]"
    return _scalar(v)


def _fill(v: list[Any], indent: int) -> str:
    """Numbers as prettier fills them: as many per line as fit."""
    pad = " " * (indent + 2)
    lines: list[str] = []
    line = ""
    for x in v:
        item = _scalar(x) + ","
        if line and width(pad + line + " " + item) > WIDTH:
            lines.append(line)
            line = item
        else:
            line = f"{line} {item}" if line else item
    return "[\n" + "".join(pad + x + "\n" for x in [*lines, line]) + " " * indent + "]"


def value(v: Any, column: int, indent: int, tail: int = 1) -> str:
    """The value starting at `column`, its lines indented from `indent`, `tail` characters following it (a comma)."""
    flat = _flat(v)
    if flat is not None and column + width(flat) + tail <= WIDTH:
        return flat
    pad = " " * (indent + 2)
    if isinstance(v, dict) and v:
        return "{\n" + "".join(pad + prop(k, x, indent + 2) + ",\n" for k, x in v.items()) + " " * indent + "}"
    if isinstance(v, list) and v:
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            return _fill(v, indent)
        return "[\n" + "".join(pad + value(x, indent + 2, indent + 2) + ",\n" for x in v) + " " * indent + "]"
    return flat if flat is not None else _scalar(v)


def prop(k: str, v: Any, indent: int) -> str:
    """`key: value` for a property whose line starts at column `indent` and ends with a comma."""
    head = key(k) + ": "
    if isinstance(v, str) and width(head) - 2 >= SHORT_KEY and indent + width(head + string(v)) + 1 > WIDTH:
        return f"{key(k)}:\n{' ' * (indent + 2)}{string(v)}"
    return head + value(v, indent + width(head), indent)
