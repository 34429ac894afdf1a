"""What a docs config module keeps across `cookbook import` -> `export --format sglang-jsx`: its own text for every
property hybridplan does not model, and for every modelled one while the page still holds what was imported.

A modelled property (cells one by one) carries a digest of the page data read from it; the export compares that
digest with the page it is given, writes the module's text where they agree and hybridplan's own rendering where
the page changed, so an unchanged import exports the module itself (plus hybridplan's provenance key).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from hybridplan.cookbook.docs_literal import Layout, Slot
from hybridplan.cookbook.schema import DocsModule, DocsText, Page

PRIVATE = "hybridplan"  # the config-private key hybridplan writes its own data under (the docs ignore it)

# the module's top-level keys hybridplan reads into page fields (the legacy four all become match_dims)
MODELLED = {"modelName": "model", "supportedHardware": "supported_hardware", "hardware": "hardware",
            "matchDims": "match_dims", "variants": "match_dims", "quantizations": "match_dims",
            "strategies": "match_dims", "nodesOptions": "match_dims", "overlayDims": "overlay_dims",
            "cells": "cells", "modelNames": "model_names", "dockerImages": "docker_images",
            "placeholders": "placeholders", "curl": "curl", "benchmarkCommands": "benchmark_commands",
            "multiNodeHints": "multi_node_hints", "dockerMounts": "docker_mounts", "dockerRunCommand": "program"}
GROUPS = tuple(dict.fromkeys(MODELLED.values()))
# a cell's keys -> the page field each is written from (the badge's two keys share one)
CELL_KEYS = {"match": "match", "verified": "status", "verificationStatus": "status", "env": "env", "flags": "flags",
             "warn": "warn", "note": "note", "redirect": "redirect", "nnodes": "nnodes", PRIVATE: PRIVATE}
CELL_GROUPS = tuple(dict.fromkeys(CELL_KEYS.values()))
ROW_KEYS = ("id", "title", "options", "default", "showWhen", "kind")
OPTION_KEYS = ("id", "label", "subtitle", "showWhen", "disabled", "disableReason", "flags", "env", "hints",
               "stripPrefixes", "nnodes")
HARDWARE_KEYS = ("id", "label", "vendor")


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _dump(x: Any) -> Any:
    return x.model_dump(mode="json", by_alias=True, exclude_defaults=True) if hasattr(x, "model_dump") else x


def group_value(page: Page, group: str) -> Any:
    """The page data a modelled group is written from (what its digest covers)."""
    if group == "hardware":
        from hybridplan.cookbook.pages import docs_shared_hardware

        shared = docs_shared_hardware()
        return [[h.id, h.label, h.group] for h in page.hardware if h.id not in shared]
    if group == "cells":
        return [cell_field(page, i, f) for i in range(len(page.cells)) for f in CELL_GROUPS]
    v = getattr(page, group)
    if isinstance(v, list):
        return [_dump(x) for x in v]
    if isinstance(v, dict):
        return {k: _dump(x) for k, x in v.items()}
    return _dump(v)


def cell_field(page: Page, i: int, group: str) -> Any:
    """A cell's value for one of CELL_GROUPS (what the module writes under that group's keys)."""
    c = page.cells[i]
    v = c.verification
    if group == "status":
        return [v.status, [_dump(r) for r in v.rules]]
    if group == PRIVATE:
        return v.model_dump(mode="json", exclude={"status", "rules"}, exclude_defaults=True)
    return _dump(getattr(c, group))


def group_digest(page: Page, group: str) -> str:
    return _digest(group_value(page, group))


def cell_digest(page: Page, i: int) -> str:
    return _digest([cell_field(page, i, f) for f in CELL_GROUPS])


def _carried(data: dict[str, Any]) -> list[str]:
    """What hybridplan does not model, as paths: top-level keys, and keys inside modelled entries."""
    out = [k for k in data if k not in MODELLED and k != PRIVATE]

    def extras(prefix: str, entries: Any, known: tuple[str, ...]) -> None:
        for e in entries if isinstance(entries, list) else []:
            if isinstance(e, dict):
                out.extend(f"{prefix}[{e.get('id', '?')}].{k}" for k in e if k not in known)

    extras("hardware", data.get("hardware"), HARDWARE_KEYS)
    for key in ("matchDims", "overlayDims"):
        rows: list[Any] = data[key] if isinstance(data.get(key), list) else []
        extras(key, rows, ROW_KEYS)
        for r in rows:
            if isinstance(r, dict):
                extras(f"{key}[{r.get('id')}].options", r.get("options"), OPTION_KEYS)
    for i, c in enumerate(data.get("cells") or []):
        if isinstance(c, dict):
            out.extend(f"cells[{i}].{k}" for k in c if k not in CELL_KEYS and k != PRIVATE)
    return out


def keep(lay: Layout, data: dict[str, Any], page: Page, path: str) -> DocsModule:
    """The module's layout for a page just imported from it (`data`: the sandbox's literal data)."""
    t = lay.text
    lit = lay.literal
    props = []
    for slot in lit.slots:
        if slot.key == PRIVATE:  # hybridplan's own key: written afresh where the module had it, comments kept
            props.append(DocsText(key=PRIVATE, text=t[slot.lead:slot.start], of=PRIVATE))
            continue
        of = MODELLED.get(slot.key or "")
        arr = slot.value
        if of == "cells" and arr.kind == "array" and arr.slots and len(arr.slots) == len(page.cells):
            items = [_cell(t, page, k, s) for k, s in enumerate(arr.slots)]
            props.append(DocsText(key=slot.key, text=t[slot.lead:arr.start + 1], of=of, items=items,
                                  close=t[arr.slots[-1].end:slot.end]))
        else:
            props.append(DocsText(key=slot.key, text=t[slot.lead:slot.end], of=of,
                                  digest=group_digest(page, of) if of else None))
    present = {MODELLED[s.key] for s in lit.slots if s.key in MODELLED}
    return DocsModule(path=path, head=t[:lit.start + 1], props=props,
                      close=t[lit.slots[-1].end if lit.slots else lit.start + 1:], carried=_carried(data),
                      absent={g: group_digest(page, g) for g in GROUPS if g not in present})


def _cell(t: str, page: Page, k: int, s: Slot) -> DocsText:
    """Cell k as kept text: property by property, each modelled one with the digest of the page field it holds."""
    key = json.dumps(page.cells[k].match, sort_keys=True)
    c = s.value
    if c.kind != "object" or not c.slots:
        return DocsText(key=key, text=t[s.lead:s.end], digest=cell_digest(page, k))
    fields = [DocsText(key=f.key, text=t[f.lead:f.end], of=CELL_KEYS.get(f.key or ""),
                       digest=_digest(cell_field(page, k, CELL_KEYS[f.key])) if f.key in CELL_KEYS else None)
              for f in c.slots]
    present = {CELL_KEYS[f.key] for f in c.slots if f.key in CELL_KEYS}
    return DocsText(key=key, text=t[s.lead:c.start + 1], digest=cell_digest(page, k), items=fields,
                    close=t[c.slots[-1].end:s.end],
                    absent={g: _digest(cell_field(page, k, g)) for g in CELL_GROUPS if g not in present})


def assemble(page: Page, fresh: Callable[[str], str], fresh_cell: Callable[[int], dict[str, str]],
             private: str) -> str:
    """The module text for `page` from its kept layout: kept text where the page still holds what was imported,
    `fresh(group)` (a `key: value` text) where it changed or is new; a changed cell keeps its unchanged properties
    and takes `fresh_cell(i)[group]` for the rest (the whole cell afresh, under "", where the module has none)."""
    docs = page.docs
    assert docs is not None
    pieces: list[str] = []
    written: set[str] = set()
    for p in docs.props:
        if p.of == PRIVATE:
            pieces.append(p.text + private)
        elif p.of is None:
            pieces.append(p.text)
        elif p.of == "cells" and p.items:
            pieces.append(p.text + _cells(page, p.items, fresh_cell) + p.close)
        elif p.digest == group_digest(page, p.of):
            pieces.append(p.text)
        elif p.of not in written and (text := fresh(p.of)):
            pieces.append("\n  " + text)
        written.add(p.of or "")
    for g in GROUPS:
        if g not in written and docs.absent.get(g) != group_digest(page, g) and (text := fresh(g)):
            pieces.append("\n  " + text)
    if PRIVATE not in written:
        pieces.append("\n  " + private)
    return docs.head + ",".join(pieces) + docs.close


def _cells(page: Page, items: list[DocsText], fresh_cell: Callable[[int], dict[str, str]]) -> str:
    free = list(items)
    out = []
    for i in range(len(page.cells)):
        d = cell_digest(page, i)
        kept = next((it for it in free if it.digest == d), None)
        if kept is None:  # changed: the module's own cell with this match, edited field by field
            key = json.dumps(page.cells[i].match, sort_keys=True)
            kept = next((it for it in free if it.key == key and it.items), None)
            if kept is None:
                out.append("\n    " + fresh_cell(i)[""])
                continue
            free.remove(kept)
            out.append(_edited(page, i, kept, fresh_cell(i)))
            continue
        free.remove(kept)
        out.append(kept.whole())
    return ",".join(out)


_LEAD = re.compile(r"(?:\s|//[^\n]*|/\*.*?\*/)*", re.S)


def _edited(page: Page, i: int, kept: DocsText, fresh: dict[str, str]) -> str:
    """A kept cell with the fields the page changed written afresh in place (a group with two keys, the badge's
    `verified`/`verificationStatus`, in the place of its first), gained fields added last, dropped ones left out."""
    parts: list[str] = []
    done: set[str] = set()
    for f in kept.items:
        if f.of is None or f.digest == _digest(cell_field(page, i, f.of)):
            parts.append(f.text)
        elif f.of not in done and fresh.get(f.of):
            parts.append(_LEAD.match(f.text).group() + fresh[f.of])  # type: ignore[union-attr]
        done.add(f.of or "")
    indent = _LEAD.match(kept.items[-1].text).group() if kept.items else "\n      "  # type: ignore[union-attr]
    for g in CELL_GROUPS:
        if g not in done and kept.absent.get(g) != _digest(cell_field(page, i, g)) and fresh.get(g):
            parts.append(indent + fresh[g])
    return kept.text + ",".join(parts) + kept.close


# page fields a finding's location starts with -> the module's key (legacy match dims by position)
_LOC_KEYS = {v: k for k, v in MODELLED.items() if k not in ("variants", "quantizations", "strategies",
                                                            "nodesOptions")}
_LOC_STEPS = {"strip": "stripPrefixes", "show_when": "showWhen"}


@dataclass(frozen=True)
class ModuleLines:
    """A finding's location on an imported page as a line of the module it came from (the deepest part of the
    module's literal the location reaches; the `export const config` line where it reaches none)."""

    origin: str
    layout: Layout

    def line(self, loc: tuple[str | int, ...]) -> int:
        lit = self.layout.literal
        keys = [s.key for s in lit.slots if s.key]
        rest = list(loc)
        path: list[str | int] = []
        if rest[:1] == ["match_dims"] and "matchDims" not in keys:  # legacy: one top-level array per dim
            legacy = [k for k in keys if MODELLED.get(k) == "match_dims"]
            i = rest[1] if len(rest) > 1 else None
            if isinstance(i, int) and i < len(legacy):
                path = [legacy[i]]
                rest = rest[3:] if rest[2:3] == ["options"] else []
            else:
                rest = []
        elif rest:
            path, rest = [_LOC_KEYS.get(str(rest[0]), str(rest[0]))], rest[1:]
        path += [_LOC_STEPS.get(x, x) if isinstance(x, str) else x for x in rest]
        best = lit
        for k in range(1, len(path) + 1):
            v = self.layout.at(tuple(path[:k]))
            if v is None:
                break
            best = v
        return self.layout.line(best.start if best is not lit else self.layout.open_start)
