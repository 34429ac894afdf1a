"""`cookbook import --merge PAGE.yaml`: a page regenerated from its docs config module, hybridplan's own additions
kept as an overlay.

The docs module owns what its Deploy panel shows: dimensions, options, cells (match, flags, env, warn, badge),
model names, images, placeholders, curl. The existing page (the overlay) keeps what only hybridplan has: description,
workload, install, build warnings, examples, measured records and their benchmark commands, `no_cell` reasons, each
cell's note and measurements, the launch program, hardware catalog links, and the row-level strips and option
subtitles the docs lack. Overlay cells and options the module no longer has are dropped (and listed). The page's
`source` records the import.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Callable, Collection

from hybridplan.version import __version__

DOCS_PAGE = ("model", "supported_hardware", "hardware", "match_dims", "overlay_dims", "cells", "model_names",
             "docker_images", "placeholders", "curl", "multi_node_hints", "docker_mounts",
             "benchmark_commands")
DOCS_CELL = ("match", "flags", "env", "warn", "redirect", "nnodes")
DOCS_VERIFICATION = ("status", "rules")


def provenance(origin: str, path: str, node: str, on: date | None = None) -> str:
    """The `source` line of an imported page: module repo@commit and path, importer version, Node, date."""
    day = (on or date.today()).isoformat()
    return (f"SGLang docs config module {origin}:{path}, imported by hybridplan {__version__} `cookbook import` "
            f"(Node {node or 'unknown'}) on {day}")


_Merge = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]  # (imported, overlay) -> merged entry


def _keep(imported: dict[str, Any], overlay: dict[str, Any], owned: tuple[str, ...]) -> dict[str, Any]:
    """The imported entry with the overlay's keys the docs do not own (the overlay's value where both have one)."""
    return {**imported, **{k: v for k, v in overlay.items() if k not in owned}}


def _by_id(imported: list[Any], overlay: list[Any], merge: _Merge, what: str, notes: list[str],
           keep: Collection[Any] = ()) -> list[Any]:
    theirs = {o.get("id"): o for o in overlay if isinstance(o, dict)}
    out = [merge(i, theirs[i["id"]]) if i.get("id") in theirs else i for i in imported]
    gone = [k for k in theirs if k not in {i.get("id") for i in imported} and k not in keep]
    if gone:
        notes.append(f"merge: {what} {', '.join(map(str, gone))} not in the module, dropped")
    return out


def _option(imported: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    out = dict(imported)
    if "subtitle" not in imported and "subtitle" in overlay:
        out["subtitle"] = overlay["subtitle"]
    return out


def _dimension(notes: list[str]) -> _Merge:
    def merge(imported: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
        out = {**imported, "options": _by_id(imported["options"], overlay.get("options") or [], _option,
                                             f"option(s) of {imported['id']}:", notes)}
        if overlay.get("strip"):
            out["strip"] = overlay["strip"]
            notes.append(f"merge: {imported['id']} keeps hybridplan's row-level strip {overlay['strip']} "
                         "(the docs' engine ignores row strips)")
        return out
    return merge


def _covers(overlay_match: dict[str, Any], match: dict[str, Any]) -> bool:
    return set(overlay_match) == set(match) and all(
        v == match[k] or (isinstance(v, list) and match[k] in v) for k, v in overlay_match.items())


def _completed(overlay_cells: list[Any], dims: list[dict[str, Any]], notes: list[str]) -> list[dict[str, Any]]:
    """Each overlay cell's match with the module's match dims it lacks set to that dimension's default (else its
    first option): a page keyed before the docs added a dimension keeps its cells (and measurements) there."""
    out = []
    for o in overlay_cells:
        match = dict(o.get("match") or {})
        for d in dims:
            if d["id"] not in match and d.get("options"):
                match[d["id"]] = d.get("default") or d["options"][0]["id"]
        out.append(match)
    added = {f"{d['id']}={d.get('default') or d['options'][0]['id']}" for d in dims if d.get("options")
             and any(d["id"] not in (o.get("match") or {}) for o in overlay_cells)}
    if added:
        notes.append(f"merge: overlay cells without {', '.join(sorted(added))[:200]} are matched to the module cell "
                     "with that value (the dimension's default, else its first option)")
    return out


def _cell(imported: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    out = _keep(imported, overlay, DOCS_CELL + ("verification",))
    ver = overlay.get("verification") or {}
    out["verification"] = _keep(imported.get("verification") or {}, ver, DOCS_VERIFICATION)
    return out


def merge_page(imported: dict[str, Any], overlay: dict[str, Any], source: str) -> tuple[dict[str, Any], list[str]]:
    """The imported page data with the overlay page's own additions; notes list what was dropped or kept."""
    notes: list[str] = []
    out: dict[str, Any] = {"id": overlay.get("id", imported["id"]), "model": imported["model"]}
    for key in ("description", "engine_version"):
        if key in overlay:
            out[key] = overlay[key]
    out["source"] = source
    for key, value in imported.items():
        if key not in out and key not in ("source", "program"):  # the launch form stays hybridplan's
            out[key] = value
    mine = imported.get("hardware") or []
    shared = [h for h in overlay.get("hardware") or [] if isinstance(h, dict) and h.get("id") in
              set(imported["supported_hardware"]) - {m["id"] for m in mine}]  # in hybridplan's catalog: not imported
    out["hardware"] = _by_id(mine, overlay.get("hardware") or [],
                             lambda i, o: _keep(i, o, ("id", "label", "group", "vendor")), "hardware", notes,
                             keep=[h["id"] for h in shared]) + shared
    if not out["hardware"]:
        out.pop("hardware")
    for key in ("match_dims", "overlay_dims"):
        out[key] = _by_id(imported.get(key) or [], overlay.get(key) or [], _dimension(notes), f"{key}", notes)
    cells, used = [], set()
    theirs = [o for o in overlay.get("cells") or [] if isinstance(o, dict)]
    matches = _completed(theirs, out["match_dims"], notes)
    for c in imported["cells"]:
        k = next((k for k, m in enumerate(matches) if _covers(m, c["match"])), None)
        cells.append(c if k is None else _cell(c, theirs[k]))
        if k is not None:
            used.add(k)
    dropped = [o.get("match") for k, o in enumerate(theirs) if k not in used]
    if dropped:
        notes.append(f"merge: {len(dropped)} overlay cell(s) match no module cell, dropped: {dropped[:3]}")
    out["cells"] = cells
    if isinstance(overlay.get("benchmark_commands"), dict):  # its accuracy ids name evals, the docs' metrics
        out["benchmark_commands"] = overlay["benchmark_commands"]
        notes.append("merge: benchmark_commands kept from the page (its records and accuracy ids refer to them)")
    for key, value in overlay.items():
        if key not in out and key not in DOCS_PAGE:
            out[key] = value
    return out, notes
