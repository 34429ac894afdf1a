"""What the linear-time tests of every engine's log and command parsers share: the compiled patterns a module holds,
a check of each pattern's shape (bounded repeats only), and a count of the characters the patterns are handed while
a parser runs (work that must grow no faster than its input)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from re import _constants as sre_constants  # the stdlib's own regex parser (public as sre_* before 3.11)
from re import _parser as sre_parse
from types import ModuleType
from typing import Any


def patterns(module) -> dict[str, re.Pattern]:
    """Every compiled pattern a module holds, by name (inside tuples too)."""
    out = {}
    for name, value in vars(module).items():
        if isinstance(value, re.Pattern):
            out[name] = value
        elif isinstance(value, tuple):
            for i, item in enumerate(value):
                for j, x in enumerate(item if isinstance(item, tuple) else (item,)):
                    if isinstance(x, re.Pattern):
                        out[f"{name}[{i}][{j}]"] = x
    return out


def unbounded(parsed) -> list[str]:
    """The repeats of a parsed pattern without an upper bound (`*`, `+`, `{n,}`, lazy or not)."""
    bad = []
    for op, av in parsed:
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            lo, hi, sub = av
            if hi == sre_constants.MAXREPEAT:
                bad.append(f"{op} {{{lo},}}")
            bad += unbounded(sub)
        elif op == sre_constants.SUBPATTERN:
            bad += unbounded(av[-1])
        elif op == sre_constants.BRANCH:
            for branch in av[1]:
                bad += unbounded(branch)
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            bad += unbounded(av[1])
    return bad


class Counting:
    """A compiled pattern that counts the characters each call may scan: the rest of the subject for a search,
    at most the pattern's maximum width for an anchored match."""

    def __init__(self, pattern: re.Pattern, tally: list[int]) -> None:
        self.p, self.tally = pattern, tally
        self.width = sre_parse.parse(pattern.pattern, pattern.flags).getwidth()[1]
        self.pattern, self.flags = pattern.pattern, pattern.flags

    def _scan(self, s: str, pos: int = 0) -> None:
        self.tally[0] += max(len(s) - pos, 0)

    def match(self, s, pos=0, *a):
        self.tally[0] += min(max(len(s) - pos, 0), self.width)
        return self.p.match(s, pos, *a)

    def fullmatch(self, s, pos=0, *a):
        self.tally[0] += min(max(len(s) - pos, 0), self.width)
        return self.p.fullmatch(s, pos, *a)

    def search(self, s, pos=0, *a):
        self._scan(s, pos)
        return self.p.search(s, pos, *a)

    def finditer(self, s, pos=0, *a):
        self._scan(s, pos)
        return self.p.finditer(s, pos, *a)

    def findall(self, s, pos=0, *a):
        self._scan(s, pos)
        return self.p.findall(s, pos, *a)

    def split(self, s, *a):
        self._scan(s)
        return self.p.split(s, *a)

    def sub(self, repl, s, *a):
        self._scan(s)
        return self.p.sub(repl, s, *a)


def work(monkeypatch: Any, modules: Iterable[ModuleType], run: Callable[[], object],
         extra: Callable[[Any, list[int]], None] | None = None) -> int:
    """The characters the modules' compiled patterns are handed while `run` runs (each module-level pattern swapped
    for a Counting one; `extra` swaps any held elsewhere)."""
    tally = [0]
    with monkeypatch.context() as m:
        for module in modules:
            for name, value in vars(module).items():
                if isinstance(value, re.Pattern):
                    m.setattr(module, name, Counting(value, tally))
        if extra is not None:
            extra(m, tally)
        run()
    return tally[0]
