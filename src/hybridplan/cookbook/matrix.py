"""The selection space of a page and its matrix: every reachable selection rendered once."""

from __future__ import annotations

from typing import Any, Iterator

from hybridplan.cookbook import selection as S
from hybridplan.cookbook.render import Rendered, render_landed, resolve_selection
from hybridplan.cookbook.schema import Page


def selection_space(page: Page) -> Iterator[dict[str, str]]:
    """Every combination of hardware, match and overlay options (the docs validator's space, without its cap)."""
    yield from S.combinations(S.rows(page))


Resolution = tuple[dict[str, str], list[S.Reseat]]  # resolve_selection's answer


def _resolve_space(page: Page) -> tuple[dict[tuple[Any, ...], list[dict[str, str]]], dict[tuple[Any, ...], Resolution]]:
    """Landed selection -> the raw picks that land on it (first-seen order), and each raw pick combination's
    resolution keyed by its items (in order)."""
    land: dict[tuple[Any, ...], list[dict[str, str]]] = {}
    seen: dict[tuple[Any, ...], Resolution] = {}
    for picks in selection_space(page):
        res = seen[tuple(picks.items())] = resolve_selection(page, picks)
        land.setdefault(tuple(res[0].items()), []).append(picks)
    return land, seen


def landings(page: Page) -> Iterator[tuple[tuple[Any, ...], list[dict[str, str]], Resolution]]:
    """(landed selection, the raw picks landing there, its own resolution: what render(page, landed) starts from);
    a selection that is itself a pick combination was resolved already, the rest are resolved here."""
    land, seen = _resolve_space(page)
    for key, picks in land.items():
        yield key, picks, seen.get(key) or resolve_selection(page, dict(key))


def page_summary(page: Page) -> dict[str, Any]:
    """What `cookbook list` shows for a page (no rendering)."""
    statuses = {c.cell.verification.status for c in page.lookup}
    return {"id": page.id, "model": page.model, "source": page.source, "engine_version": page.engine_version,
            "hardware": [h.id for h in page.hardware], "match_dims": [d.id for d in page.match_dims],
            "overlay_dims": [d.id for d in page.overlay_dims], "cells": len(page.lookup),
            "verified_cells": sum(c.cell.verification.status == "verified" for c in page.lookup),
            "statuses": sorted(statuses)}


def listing() -> dict[str, Any]:
    """`cookbook list --json` (and the web's /api/pages): every bundled page's summary."""
    from hybridplan.cookbook.pages import bundled_ids, load_page

    return {"pages": [page_summary(load_page(pid)) for pid in bundled_ids()]}


def entry(r: Rendered, picks: int) -> dict[str, Any]:
    """One matrix row: the landed selection, its command, badge, warnings and greyed options with reasons."""
    greyed = {d: [{"id": o.id, "reason": o.reason} for o in opts if o.disabled] for d, opts in r.options.items()}
    return {"selection": r.selection, "picks_landing_here": picks, "cell": r.cell, "badge": r.badge,
            "command": r.command, "flags": list(r.flags), "env": list(r.env), "warnings": list(r.warnings),
            "notes": list(r.notes), "ratio": r.ratio, "redirect": r.redirect,
            "greyed": {d: v for d, v in greyed.items() if v}}


def matrix(page: Page, *, docker: bool = False, pin_ratio: bool = True) -> dict[str, Any]:
    """Every reachable selection rendered (pip or docker form), with how many raw pick combinations land there."""
    land = list(landings(page))
    rows = [entry(render_landed(page, *res, docker=docker, pin_ratio=pin_ratio, panel=False), len(picks)) for _, picks, res in land]
    badges = {b: sum(r["badge"] == b for r in rows) for b in ("verified", "in-progress", "unverified")}
    return {"page": page.id, "model": page.model, "engine_version": page.engine_version,
            "dims": [r.id for r in S.rows(page)], "combinations": sum(len(p) for _, p, _ in land),
            "selections": rows, "badges": badges}
