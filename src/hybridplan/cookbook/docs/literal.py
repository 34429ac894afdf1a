"""The source layout of a docs config module's `export const config = {...}` literal: where each property and array
element sits in the text, so an import can write back exactly what it does not model.

Only the literal's data level is scanned here (objects, arrays, strings, template strings, numbers, true/false/
null/undefined); a function is skipped by its own source text, which the Node sandbox reports verbatim
(`String(fn)`), so no JavaScript is parsed or run in Python. Anything else at data level (a spread, a call, a
reference to a name, a computed or shorthand key, code outside the literal) is a construct the importer cannot keep:
`Refused` names it, and nothing is imported.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from hybridplan.errors import BadInput

_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"-?(?:0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)n?")
_KEYWORDS = {"true", "false", "null", "undefined", "NaN", "Infinity"}
_OPEN = re.compile(r"export\s+const\s+config\s*=\s*\{")


class Refused(BadInput):
    """A construct the importer cannot keep (named in the message)."""


@dataclass
class Slot:
    """One property (key set) or array element (key None): `lead` is where its text starts (just after the previous
    comma or the opening bracket, so leading comments ride with it), `start` where its own text starts, `end` where
    it stops (its comma, else its value's end), so the slots joined by commas give back the text between them."""

    key: str | None
    lead: int
    start: int
    end: int
    value: "Value"


@dataclass
class Value:
    """A value's span and, for an object or array, its slots; `tail` starts after the last slot (a trailing comma,
    comments and whitespace up to the closing bracket)."""

    kind: str  # object | array | scalar | function
    start: int
    end: int
    slots: list[Slot] = field(default_factory=list)
    tail: int = 0


@dataclass(frozen=True)
class Layout:
    """The scanned module: the text, the span of `export const config = {`, the literal, and the text after it."""

    text: str
    open_start: int
    literal: Value

    def line(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def at(self, path: tuple[str | int, ...]) -> Value | None:
        """The value at a path of keys and indexes (None when the literal has nothing there)."""
        v: Value | None = self.literal
        for step in path:
            if v is None:
                return None
            if isinstance(step, int):
                v = v.slots[step].value if v.kind == "array" and 0 <= step < len(v.slots) else None
            else:
                v = next((s.value for s in v.slots if s.key == step), None) if v.kind == "object" else None
        return v


class _Scanner:
    def __init__(self, text: str, data: dict[str, Any]):
        self.t = text
        self.data = data
        self.i = 0

    def where(self, path: tuple[str | int, ...]) -> str:
        line = self.t.count("\n", 0, self.i) + 1
        return f"{'.'.join(map(str, path)) or 'config'} (line {line})"

    def refuse(self, what: str, path: tuple[str | int, ...]) -> Refused:
        snippet = self.t[self.i:self.i + 40].split("\n")[0]
        return Refused(f"cannot keep {what} at {self.where(path)}: `{snippet}`; the module was not imported")

    def skip(self) -> None:
        """Whitespace and comments."""
        t = self.t
        while self.i < len(t):
            c = t[self.i]
            if c.isspace():
                self.i += 1
            elif t.startswith("//", self.i):
                end = t.find("\n", self.i)
                self.i = len(t) if end < 0 else end
            elif t.startswith("/*", self.i):
                end = t.find("*/", self.i + 2)
                if end < 0:
                    raise Refused(f"an unterminated comment at line {self.t.count(chr(10), 0, self.i) + 1}")
                self.i = end + 2
            else:
                return

    def string(self, path: tuple[str | int, ...]) -> None:
        q = self.t[self.i]
        j = self.i + 1
        while j < len(self.t):
            c = self.t[j]
            if c == "\\":
                j += 2
                continue
            if q == "`" and self.t.startswith("${", j):
                raise self.refuse("a template string with an expression", path)
            if c == q:
                self.i = j + 1
                return
            if c == "\n" and q != "`":
                break
            j += 1
        raise self.refuse("an unterminated string", path)

    def _at(self, path: tuple[str | int, ...]) -> Any:
        """The sandbox's data at a path (None where it has nothing)."""
        v: Any = self.data
        for step in path:
            if isinstance(v, dict) and isinstance(step, str):
                v = v.get(step)
            elif isinstance(v, list) and isinstance(step, int) and step < len(v):
                v = v[step]
            else:
                return None
        return v

    def concatenation(self, path: tuple[str | int, ...]) -> None:
        """`"a " + "b"` (a long string split over lines): string literals joined by `+` are one value."""
        while True:
            end = self.i
            self.skip()
            if not self.t.startswith("+", self.i) or self.t.startswith("++", self.i):
                self.i = end  # what follows the value (comments included) belongs to the next slot
                return
            self.i += 1
            self.skip()
            if self.t[self.i:self.i + 1] not in ("\"", "'", "`"):
                raise self.refuse("an expression (only string literals may be joined with `+`)", path)
            self.string(path)

    def function(self, path: tuple[str | int, ...]) -> str | None:
        """The source of the function the sandbox found at `path`, if any."""
        v = self._at(path)
        if isinstance(v, dict) and isinstance(v.get("$fn") or v.get("$getter"), str):
            return v.get("$fn") or v.get("$getter")
        return None

    def value(self, path: tuple[str | int, ...]) -> Value:
        self.skip()
        start, t = self.i, self.t
        src = self.function(path)
        if src is not None and t.startswith(src, start):
            self.i += len(src)
            return Value("function", start, self.i)
        c = t[start:start + 1]
        if c == "{":
            return self.container(path, "object", "}")
        if c == "[":
            return self.container(path, "array", "]")
        if c in "\"'`":
            self.string(path)
            self.concatenation(path)
            return Value("scalar", start, self.i)
        if t.startswith("...", start):
            raise self.refuse("a spread", path)
        m = _NUMBER.match(t, start)
        if m and m.group():
            self.i = m.end()
            return Value("scalar", start, self.i)
        m = _IDENT.match(t, start)
        if m and m.group() in _KEYWORDS:
            self.i = m.end()
            return Value("scalar", start, self.i)
        if src is not None:
            raise self.refuse("a function whose source the sandbox does not see verbatim (made by a call?)", path)
        raise self.refuse("a name, call or expression", path)

    def key(self, path: tuple[str | int, ...]) -> str:
        """A property key (identifier, number or quoted string)."""
        t = self.t
        c = t[self.i:self.i + 1]
        if c in "\"'":
            s = self.i
            self.string(path)
            raw = t[s + 1:self.i - 1]
            return str(json.loads('"' + raw.replace("\\'", "'").replace('"', '\\"') + '"') if c == "'"
                       else json.loads(t[s:self.i]))
        m = _IDENT.match(t, self.i) or _NUMBER.match(t, self.i)
        if c == "[":
            raise self.refuse("a computed key", path)
        if not m or not m.group():
            raise self.refuse("a property it cannot read", path)
        self.i = m.end()
        return m.group()

    def container(self, path: tuple[str | int, ...], kind: str, close: str) -> Value:
        out = Value(kind, self.i, 0)
        self.i += 1
        n = 0
        while True:
            lead = self.i
            self.skip()
            if self.t.startswith(close, self.i):
                out.tail = lead
                self.i += 1
                out.end = self.i
                return out
            if self.i >= len(self.t):
                raise self.refuse(f"an unclosed {kind}", path)
            if self.t.startswith("...", self.i):
                raise self.refuse("a spread", path)
            if kind == "array":
                slot_key: str | int = n
                start = self.i
                v = self.value(path + (n,))
                out.slots.append(Slot(None, lead, start, v.end, v))
            else:
                start = self.i
                method = self._method(path)
                if method is not None:
                    slot_key, v = method
                else:
                    slot_key = self.key(path)
                    self.skip()
                    if not self.t.startswith(":", self.i):
                        raise self.refuse("a shorthand property or method", path + (slot_key,))
                    self.i += 1
                    v = self.value(path + (slot_key,))
                out.slots.append(Slot(str(slot_key), lead, start, v.end, v))
            n += 1
            self.skip()
            if self.t.startswith(",", self.i):
                out.slots[-1].end = self.i  # a comment before the comma rides with its slot
                self.i += 1
            elif not self.t.startswith(close, self.i):
                raise self.refuse(f"something other than `,` or `{close}`", path + (slot_key,))

    def _method(self, path: tuple[str | int, ...]) -> tuple[str, Value] | None:
        """A method or getter (`cellFor(sel) {…}`, `get x() {…}`): the sandbox's source for some key of this object
        starts here."""
        obj = self._at(path)
        if not isinstance(obj, dict):
            return None
        for k, v in obj.items():
            src = (v.get("$fn") or v.get("$getter")) if isinstance(v, dict) else None
            if isinstance(src, str) and self.t.startswith(src, self.i) and not self.t.startswith(k + ":", self.i):
                head = src.split("(", 1)[0].split()
                if head and head[-1].strip("*\"'") == k:
                    start = self.i
                    self.i += len(src)
                    return k, Value("function", start, self.i)
        return None


def scan(text: str, data: dict[str, Any]) -> Layout:
    """The module's literal, located; Refused (naming the construct) for anything the importer cannot keep.
    `data` is the sandbox's literal data (functions as their source), used to skip functions verbatim."""
    m = _OPEN.search(text)
    s = _Scanner(text, data)
    s.skip()
    if m is None or s.i != m.start():
        where = s.i if m is None else min(s.i, m.start())
        s.i = where
        raise s.refuse("code outside the single `export const config` literal", ())
    s.i = m.end() - 1
    literal = s.container((), "object", "}")
    s.skip()
    if s.t.startswith(";", s.i):
        s.i += 1
        s.skip()
    if s.i < len(text):
        raise s.refuse("code after the `export const config` literal", ())
    return Layout(text=text, open_start=m.start(), literal=literal)
