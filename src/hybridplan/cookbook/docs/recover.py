"""Recover declarative conditions and item lists from a function's values over a finite selection space.

A docs page's `(sel) => ...` predicates and flag builders are known only by their values on every selection. A
boolean function becomes a condition (equals / in / prefix / not / all / any) by splitting on one dimension at a time,
grouping that dimension's options whose sub-functions agree, and keeping the smallest result (a decision list over
dims); points outside the care set are free. A list-valued function becomes items: the outputs are merged into one
supersequence and each entry is kept under the condition that says when it is present.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from itertools import product
from typing import Any, Sequence

Point = tuple[int, ...]
Cond = bool | dict[str, Any]  # YAML form: True/False or a one-key mapping (hybridplan.cookbook.conditions)
EXHAUSTIVE_AXES = 4  # above this many relevant dims, split on the most decisive dim only


@dataclass(frozen=True)
class Space:
    """The selection space: dims in enumeration order (row-major) with their option ids."""

    dims: tuple[str, ...]
    options: tuple[tuple[str, ...], ...]

    def points(self) -> list[Point]:
        return list(product(*[range(len(o)) for o in self.options]))

    def selection(self, point: Point) -> dict[str, str]:
        return {d: self.options[k][i] for k, (d, i) in enumerate(zip(self.dims, point))}


def _cost(c: Cond) -> int:
    if isinstance(c, bool):
        return 0
    (key, body), = c.items()
    if key in ("all", "any"):
        return 1 + sum(_cost(x) for x in body)
    if key == "not":
        return 1 + _cost(body)
    return sum(len(v) if isinstance(v, list) else 1 for v in body.values())


def _flat(parts: list[Cond], key: str, unit: bool) -> list[Cond] | None:
    """The operands of an `all` (unit True) or `any` (unit False) with nested ones of the same kind spliced in and
    the unit dropped; None when an operand is the absorbing value (not unit)."""
    flat: list[Cond] = []
    for p in parts:
        if p is unit:
            continue
        if p is (not unit):
            return None
        flat += p[key] if isinstance(p, dict) and key in p else [p]
    return flat


def _all(parts: list[Cond]) -> Cond:
    flat = _flat(parts, "all", True)
    if flat is None:
        return False
    merged: dict[str, str] = {}
    rest: list[Cond] = []
    for p in flat:
        if isinstance(p, dict) and "equals" in p and not set(p["equals"]) & set(merged):
            merged.update(p["equals"])
        else:
            rest.append(p)
    head: list[Cond] = [{"equals": merged}] if merged else []
    flat = head + rest
    return True if not flat else flat[0] if len(flat) == 1 else {"all": flat}


def _any(parts: list[Cond]) -> Cond:
    flat = _flat(parts, "any", False)
    if flat is None:
        return True
    return False if not flat else flat[0] if len(flat) == 1 else {"any": flat}


def _not(c: Cond) -> Cond:
    if isinstance(c, bool):
        return not c
    return c["not"] if "not" in c else {"not": c}


def _member(dim: str, names: Sequence[str], allowed: Sequence[str], excluded: Sequence[str]) -> Cond:
    """`dim` in `names`, written the shortest way that holds on `names` and fails on `excluded`
    (a prefix shared by all of them, an equals, an in, or not-in the excluded ones)."""
    names = sorted(names, key=allowed.index)
    cands: list[Cond] = [{"equals": {dim: names[0]}} if len(names) == 1 else {"in": {dim: list(names)}}]
    if excluded:
        ex = sorted(excluded, key=allowed.index)
        cands.append({"not": {"equals": {dim: ex[0]}} if len(ex) == 1 else {"in": {dim: ex}}})
    if len(names) > 1:
        p = os.path.commonprefix(list(names))
        for pre in (p.rstrip("-_."), p):
            whole = bool(pre) and all(len(n) == len(pre) or n[len(pre)] in "-_." or pre[-1] in "-_." for n in names)
            if whole and not any(e.startswith(pre) for e in excluded):
                cands.append({"prefix": {dim: pre}})
                break
    return min(cands, key=_cost)


class _Solver:
    def __init__(self, space: Space):
        self.space = space
        self.memo: dict[tuple[tuple[int, ...], frozenset[tuple[Point, bool]]], Cond] = {}

    def best(self, axes: tuple[int, ...], table: dict[Point, bool]) -> Cond:
        """The smallest condition found that agrees with `table` (points over `axes`; absent points are free)."""
        if all(table.values()):
            return True
        if not any(table.values()):
            return False
        axes, table = self._relevant(axes, table)
        key = (axes, frozenset(table.items()))
        if key not in self.memo:
            pos = self._split(axes, table)
            neg = self._split(axes, {p: not v for p, v in table.items()})
            self.memo[key] = pos if _cost(pos) <= _cost(neg) + 1 else _not(neg)
        return self.memo[key]

    def _relevant(self, axes: tuple[int, ...], table: dict[Point, bool]) -> tuple[tuple[int, ...], dict[Point, bool]]:
        """Drop the dims the function does not depend on (on the points it cares about)."""
        keep = list(range(len(axes)))
        for k in range(len(axes)):
            rest = [j for j in keep if j != k]
            seen: dict[Point, bool] = {}
            if all(seen.setdefault(tuple(p[j] for j in rest), v) == v for p, v in table.items()):
                keep = rest
        proj: dict[Point, bool] = {}
        for p, v in table.items():
            proj[tuple(p[j] for j in keep)] = v
        return tuple(axes[j] for j in keep), proj

    def _groups(self, axes: tuple[int, ...], table: dict[Point, bool], k: int) -> list[tuple[list[int], dict[Point, bool]]]:
        """Options of axis k grouped by compatible sub-functions (greedy), each with its merged sub-table."""
        cof: dict[int, dict[Point, bool]] = {}
        for p, v in table.items():
            cof.setdefault(p[k], {})[p[:k] + p[k + 1:]] = v
        groups: list[tuple[list[int], dict[Point, bool]]] = []
        for opt, sub in sorted(cof.items()):
            for names, merged in groups:
                if all(merged.get(q, w) == w for q, w in sub.items()):
                    names.append(opt)
                    merged.update(sub)
                    break
            else:
                groups.append(([opt], dict(sub)))
        return groups

    def _split(self, axes: tuple[int, ...], table: dict[Point, bool]) -> Cond:
        if len(axes) == 1:
            return self._single(axes[0], table)
        ks = list(range(len(axes)))
        if len(axes) > EXHAUSTIVE_AXES:
            ks = [min(ks, key=lambda k: len(self._groups(axes, table, k)))]
        best: Cond | None = None
        for k in ks:
            rest = axes[:k] + axes[k + 1:]
            dim = self.space.dims[axes[k]]
            allowed = self.space.options[axes[k]]
            groups = self._groups(axes, table, k)
            seen = {o for names, _ in groups for o in names}
            terms: list[Cond] = []
            true_names: list[int] = []
            for names, sub in groups:
                c = self.best(rest, sub)
                if c is True:
                    true_names += names
                elif c is not False:
                    others = [allowed[o] for o in seen if o not in names]
                    terms.append(_all([_member(dim, [allowed[o] for o in names], allowed, others), c]))
            if true_names:
                others = [allowed[o] for o in seen if o not in true_names]
                terms.insert(0, _member(dim, [allowed[o] for o in true_names], allowed, others))
            cand = _any(terms)
            if best is None or _cost(cand) < _cost(best):
                best = cand
        assert best is not None  # two axes or more: ks is never empty
        return best

    def _single(self, axis: int, table: dict[Point, bool]) -> Cond:
        dim, allowed = self.space.dims[axis], self.space.options[axis]
        yes = [allowed[p[0]] for p, v in table.items() if v]
        no = [allowed[p[0]] for p, v in table.items() if not v]
        return _member(dim, yes, allowed, no)


def condition(space: Space, truth: dict[Point, bool]) -> Cond:
    """A condition over `space` that holds exactly where `truth` is True (points absent from `truth` are free)."""
    return _Solver(space).best(tuple(range(len(space.dims))), dict(truth))


def holds(space: Space, cond: Cond, point: Point) -> bool:
    """Evaluate a YAML-form condition at a point (for checking a recovered condition)."""
    if isinstance(cond, bool):
        return cond
    (key, body), = cond.items()
    sel = space.selection(point)
    if key == "equals":
        return all(sel.get(d) == v for d, v in body.items())
    if key == "in":
        return all(sel.get(d) in v for d, v in body.items())
    if key == "prefix":
        return all(str(sel.get(d, "")).startswith(v) for d, v in body.items())
    if key == "not":
        return not holds(space, body, point)
    if key == "all":
        return all(holds(space, c, point) for c in body)
    return any(holds(space, c, point) for c in body)


def _scs(a: list[str], b: list[str]) -> list[str]:
    """A shortest common supersequence of two lists (LCS dynamic programme)."""
    n, m = len(a), len(b)
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            dp[i][j] = dp[i + 1][j + 1] + 1 if a[i] == b[j] else max(dp[i + 1][j], dp[i][j + 1])
    out, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            out.append(a[i])
            i, j = i + 1, j + 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]


def _embed(sup: list[str], seq: list[str]) -> set[int]:
    """Leftmost positions of `seq` as a subsequence of `sup`."""
    pos, i = set(), 0
    for s in seq:
        while sup[i] != s:
            i += 1
        pos.add(i)
        i += 1
    return pos


def _key(c: Cond) -> str:
    return json.dumps(c, sort_keys=True)


def items(space: Space, value_at: dict[Point, list[str]]) -> list[Any]:
    """Items (strings and {when, then, else} branches) that expand to `value_at[p]` at every given point."""
    distinct: list[list[str]] = []
    for v in value_at.values():
        if v not in distinct:
            distinct.append(v)
    if not distinct:
        return []
    sup = distinct[0]
    for v in distinct[1:]:
        sup = _scs(sup, v)
    emb = [_embed(sup, v) for v in distinct]
    which = {p: distinct.index(v) for p, v in value_at.items()}
    solver = _Solver(space)
    axes = tuple(range(len(space.dims)))
    runs: list[tuple[dict[Point, bool], list[str]]] = []
    for i, s in enumerate(sup):
        table = {p: i in emb[k] for p, k in which.items()}
        if runs and runs[-1][0] == table:
            runs[-1][1].append(s)
        else:
            runs.append((table, [s]))
    out: list[Any] = []
    prev: dict[Point, bool] | None = None
    for table, strings in runs:
        cond = solver.best(axes, table)
        if cond is True:
            out += strings
        elif (prev is not None and out and isinstance(out[-1], dict) and "else" not in out[-1]
              and all(table[p] != prev[p] for p in table)):
            out[-1]["else"] = strings
        else:
            out.append({"when": cond, "then": strings})
        prev = table
    return out


def expand(space: Space, its: list[Any], point: Point) -> list[str]:
    """The strings `its` gives at a point (for checking recovered items)."""
    out: list[str] = []
    for it in its:
        if isinstance(it, str):
            out.append(it)
        else:
            out += expand(space, it["then"] if holds(space, it["when"], point) else it.get("else", []), point)
    return out
