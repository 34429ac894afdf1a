"""`key=value` and `key: value` fields of one log message, read in one pass.

Every engine line the parser reads is a marker (`Load weight end.`, `KV Cache is allocated.`, ...) followed by
fields: `avail mem=14.36 GB`, `#tokens: 197163`, `conv_state size: 0.10GB`. A key is one word, or two when the
first is a bare word (`avail mem`, `K size`); the value is the token after the separator. Every pattern here has
bounded repeats only, so a pass costs O(length of the text) whatever the text is.
"""

from __future__ import annotations

import re

# a word start (not inside a word, a number or a dotted name), an optional bare first word, the key, `=` or `:`
_KEY = re.compile(r"(?<![\w#.])(?:([A-Za-z_]\w{0,63}) )?([A-Za-z_#][\w#]{0,63})['\"]? ?[=:] ?")
_VALUE = re.compile(r"['\"]?([^\s,;'\"()\[\]{}=]{1,128})")
NUMBER = re.compile(r"-?\d{1,20}(?:\.\d{1,20})?")


def fields(text: str, start: int = 0) -> dict[str, str]:
    """The fields of `text` from `start` on, first occurrence of each key. A two-word key is also stored under its
    second word unless that word occurs as a key of its own."""
    out: dict[str, str] = {}
    for m in _KEY.finditer(text, start):
        v = _VALUE.match(text, m.end())
        if v is None:
            continue
        first, key = m.group(1), m.group(2)
        if first is not None:
            out.setdefault(f"{first} {key}", v.group(1))
        out.setdefault(key, v.group(1))
    return out


def number(value: str | None) -> float | None:
    """The number a value starts with (`0.10GB` -> 0.1), or None."""
    if value is None:
        return None
    m = NUMBER.match(value)
    return float(m.group()) if m else None


def integer(value: str | None) -> int | None:
    """The integer a value is (`197163` -> 197163; `1.5` -> None)."""
    if value is None:
        return None
    m = NUMBER.match(value)
    return int(m.group()) if m and "." not in m.group() else None
