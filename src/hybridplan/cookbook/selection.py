"""Selections: defaults, which options are visible and enabled (with reasons), reseating, and the cell lookup.

Mirrors the docs' Deploy engine (reference/cookbook-semantics.md §3.1-3.3): match dims are enabled when some cell
has that value and agrees with every higher-priority dim; overlay dims only by their own `disabled` rules; a pick
that is hidden or disabled moves to the first visible, enabled option of its row, rows in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from hybridplan.cookbook.conditions import evaluate
from hybridplan.cookbook.schema import CellRef, Dimension, Option, Page

NO_CELL = "Not supported for the current selection"


@dataclass(frozen=True)
class Row:
    """A selector row as the renderer sees it: hw is a row of hardware options."""

    id: str
    title: str
    options: tuple[Option, ...]
    overlay: bool
    dimension: Dimension | None  # None for hw


@dataclass(frozen=True)
class OptionState:
    id: str
    label: str
    disabled: bool
    reason: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "disabled": self.disabled, "reason": self.reason}


@dataclass(frozen=True)
class Reseat:
    dim: str
    from_: str | None
    to: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"dim": self.dim, "from": self.from_, "to": self.to, "reason": self.reason}


def rows(page: Page) -> list[Row]:
    """hw, the match dims in priority order, then the overlay dims in declaration order."""
    hw = _hw_options(tuple((h.id, h.label) for h in page.hardware))
    out = [Row(id="hw", title="Hardware", options=hw, overlay=False, dimension=None)]
    out += [Row(id=d.id, title=d.title, options=tuple(d.options), overlay=False, dimension=d) for d in page.match_dims]
    out += [Row(id=d.id, title=d.title, options=tuple(d.options), overlay=True, dimension=d) for d in page.overlay_dims]
    return out


@lru_cache(maxsize=256)
def _hw_options(choices: tuple[tuple[str, str], ...]) -> tuple[Option, ...]:
    """The hw row's options for (id, label) pairs, built once (rows() runs for every selection; never mutated)."""
    return tuple(Option(id=i, label=label) for i, label in choices)


def combinations(rows_: list[Row]) -> list[dict[str, str]]:
    """Every combination of the rows' options (cartesian, in row order)."""
    combos: list[dict[str, str]] = [{}]
    for row in rows_:
        combos = [{**c, row.id: o.id} for c in combos for o in row.options]
    return combos


def row_visible(row: Row, sel: Mapping[str, str]) -> bool:
    return (row.dimension is None or evaluate(row.dimension.show_when, sel)) and any(
        evaluate(o.show_when, sel) for o in row.options)


def find_cell(page: Page, sel: Mapping[str, str]) -> CellRef | None:
    """The first cell whose match equals the selection on hw and every match dim."""
    dims = page.dims
    return next((c for c in page.lookup if all(c.match.get(d) == sel.get(d) for d in dims)), None)


def no_cell_reason(page: Page, sel: Mapping[str, str]) -> tuple[str, bool]:
    """Why a match combination has no cell (the page's `no_cell` rules), and whether it is unsupported outright."""
    for rule in page.no_cell:
        if evaluate(rule.when, sel):
            return rule.reason, rule.unsupported
    return NO_CELL, False


def disabled_reason(page: Page, row: Row, option: Option, sel: Mapping[str, str]) -> str | None:
    """Why an option is greyed out for this selection, or None when it is enabled (isEnabled)."""
    reason = option.disabled_reason(sel)
    if reason is not None or row.overlay:
        return reason
    if page.has_cell_with(row.id, option.id, sel):
        return None
    return no_cell_reason(page, {**sel, row.id: option.id})[0]


def check_picks(page: Page, picks: Mapping[str, str]) -> dict[str, str]:
    """The picks with dim names normalised (`ssm_dtype` -> `ssm-dtype`), or BadInput naming the unknown dim/option."""
    from hybridplan.errors import BadInput

    ids = {r.id: [o.id for o in r.options] for r in rows(page)}
    by_name = {d.replace("_", "-").lower(): d for d in ids}
    out: dict[str, str] = {}
    for name, value in picks.items():
        dim = by_name.get(name.replace("_", "-").lower())
        if dim is None:
            raise BadInput(f"page {page.id} has no dimension {name!r}; its dimensions: {', '.join(ids)}")
        if value not in ids[dim]:
            raise BadInput(f"{value!r} is not an option of {dim} on page {page.id}; options: {', '.join(ids[dim])}")
        out[dim] = value
    return out


def default_selection(page: Page) -> dict[str, str]:
    """The flagship cell's match (cells[0]) and each overlay row's default."""
    first = page.lookup[0].match
    sel = {d: first[d] for d in page.dims if d in first}
    sel.update({d.id: d.default_id for d in page.overlay_dims})
    return sel


def snap(page: Page, sel: Mapping[str, str], fixed: set[str]) -> dict[str, str]:
    """Adapt the match dims the user did not pick to a cell that agrees with the ones they did
    (snapToValidCell: the cell keeping the most other picks, first wins ties). Unchanged if no cell agrees."""
    dims = page.dims
    free = [d for d in dims if d not in fixed]
    if not free:  # every match dim picked (the matrix's case): nothing to adapt, no cell scan
        return dict(sel)
    want = [(d, sel.get(d)) for d in dims if d in fixed]
    agreeing = [c for c in page.lookup if all(c.match.get(d) == v for d, v in want)]
    if not agreeing:
        return dict(sel)
    best = max(agreeing, key=lambda c: sum(c.match.get(d) == sel.get(d) for d in free))  # max keeps the first
    return {**sel, **{d: best.match[d] for d in free if d in best.match}}


def reseat(page: Page, sel: Mapping[str, str]) -> tuple[dict[str, str], list[Reseat]]:
    """Move picks that are hidden or disabled to the first visible, enabled option of their row (reseatHiddenPicks).

    Rows are taken in order (match rows, then overlay rows) against the progressively updated selection; a row with
    no available option keeps its pick. Unknown or missing picks count as unavailable.
    """
    out = dict(sel)
    moves: list[Reseat] = []
    for row in rows(page):
        available = []
        for o in row.options:
            if evaluate(o.show_when, out) and disabled_reason(page, row, o, out) is None:
                available.append(o.id)
        if not available or out.get(row.id) in available:
            continue
        old = out.get(row.id)
        option = next((o for o in row.options if o.id == old), None)
        if option is None:
            why = "no pick" if old is None else f"{old!r} is not an option of {row.id}"
        elif not evaluate(option.show_when, out) or (row.dimension is not None and not row_visible(row, out)):
            why = "hidden for the current selection"
        else:
            why = disabled_reason(page, row, option, out) or NO_CELL
        out[row.id] = available[0]
        moves.append(Reseat(dim=row.id, from_=old, to=available[0], reason=why))
    return out, moves


def option_states(page: Page, sel: Mapping[str, str]) -> dict[str, list[OptionState]]:
    """Every visible row's visible options, greyed or not, with the reason (the chip tooltip)."""
    out: dict[str, list[OptionState]] = {}
    for row in rows(page):
        if not row_visible(row, sel):
            continue
        states = []
        for o in row.options:
            if not evaluate(o.show_when, sel):
                continue
            reason = disabled_reason(page, row, o, sel)
            states.append(OptionState(id=o.id, label=o.label, disabled=reason is not None, reason=reason))
        out[row.id] = states
    return out
