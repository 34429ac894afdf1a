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
from typing import Any, Callable, Protocol

from hybridplan.cookbook.docs.literal import Layout, Slot, Value
from hybridplan.cookbook.schema import Cell, DocsModule, DocsText, Page

PRIVATE = "hybridplan"  # the config-private key hybridplan writes its own data under (the docs ignore it)
PRIVATE_NOTE = ("// `hybridplan`: the page data the docs format has no place for (provenance, modelled\n"
                "  // release, install, records); the docs' Deploy panel ignores it.")

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
_CELL_WRITTEN = {g for g in CELL_GROUPS if g not in ("status", PRIVATE)}  # cell fields the docs' own keys write
# a dimension row's keys and an option's keys -> the page field each is written from
ROW_FIELDS = {"id": "id", "title": "title", "default": "default", "showWhen": "show_when", "options": "options"}
ROW_GROUPS = tuple(ROW_FIELDS.values())
OPTION_FIELDS = {"id": "id", "label": "label", "subtitle": "subtitle", "showWhen": "show_when",
                 "disabled": "disabled", "disableReason": "disabled", "flags": "flags", "env": "env",
                 "hints": "hints", "stripPrefixes": "strip", "nnodes": "nnodes"}
OPTION_GROUPS = tuple(dict.fromkeys(OPTION_FIELDS.values()))
ROW_KEYS = (*ROW_FIELDS, "kind")
OPTION_KEYS = tuple(OPTION_FIELDS)
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


def cell_private(cell: Cell) -> dict[str, Any]:
    """What a cell holds that no docs cell key writes, for its `hybridplan` key: every field but the ones CELL_KEYS
    name (the badge's build, image and measurements; the known refusals with their reasons and sources), so a page
    and its export are checked alike."""
    data = cell.model_dump(mode="json", by_alias=True, exclude_defaults=True, exclude=_CELL_WRITTEN)
    rest = {k: v for k, v in data.pop("verification", {}).items() if k not in ("status", "rules")}
    return {**({"verification": rest} if rest else {}), **data}


def cell_field(page: Page, i: int, group: str) -> Any:
    """A cell's value for one of CELL_GROUPS (what the module writes under that group's keys)."""
    c = page.cells[i]
    v = c.verification
    if group == "status":
        return [v.status, [_dump(r) for r in v.rules]]
    if group == PRIVATE:
        return cell_private(c)
    return _dump(getattr(c, group))


def group_digest(page: Page, group: str) -> str:
    return _digest(group_value(page, group))


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


def _option_field(page: Page, group: str, i: int, j: int, field: str) -> Any:
    d = getattr(page, group)[i]
    o = d.options[j]
    if field == "strip":  # the docs apply option-level strips only: the row's ride on each option
        return [[_dump(x) for x in d.strip], [_dump(x) for x in o.strip]]
    v = getattr(o, field)
    return [_dump(x) for x in v] if isinstance(v, list) else _dump(v)


def _row_field(page: Page, group: str, i: int, field: str) -> Any:
    d = getattr(page, group)[i]
    if field == "options":
        return [_option_field(page, group, i, j, f) for j in range(len(d.options)) for f in OPTION_GROUPS]
    return _dump(d.default_id if field == "default" else getattr(d, field))


class Parts(Protocol):
    """hybridplan's own rendering of what the page holds, by page field (`key: value` texts; "" the whole entry)."""

    def group(self, group: str) -> str: ...

    def cell(self, i: int) -> dict[str, str]: ...

    def row(self, group: str, i: int) -> dict[str, str]: ...

    def option(self, group: str, i: int, j: int) -> dict[str, str]: ...


@dataclass(frozen=True)
class Level:
    """One list of the module kept entry by entry (cells, a dims array, a row's options) read against the page."""

    count: int
    key: Callable[[int], str]  # what finds the module's own entry for page entry i
    field: Callable[[int, str], Any]  # the page value of entry i's field group
    fields: dict[str, str]  # the module's keys -> field group
    indent: str
    fresh: Callable[[int], dict[str, str]] | None = None
    child: Callable[[int], "Level"] | None = None  # the `options` list of entry i

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.fields.values()))

    def digest(self, i: int) -> str:
        return _digest([self.field(i, g) for g in self.groups])


def cells_level(page: Page, parts: Parts | None = None) -> Level:
    return Level(count=len(page.cells), key=lambda i: json.dumps(page.cells[i].match, sort_keys=True),
                 field=lambda i, g: cell_field(page, i, g), fields=CELL_KEYS, indent="\n    ",
                 fresh=parts.cell if parts else None)


def rows_level(page: Page, group: str, parts: Parts | None = None) -> Level:
    def options(i: int) -> Level:
        d = getattr(page, group)[i]
        return Level(count=len(d.options), key=lambda j: d.options[j].id,
                     field=lambda j, f: _option_field(page, group, i, j, f), fields=OPTION_FIELDS,
                     indent="\n        ", fresh=(lambda j: parts.option(group, i, j)) if parts else None)

    return Level(count=len(getattr(page, group)), key=lambda i: getattr(page, group)[i].id,
                 field=lambda i, f: _row_field(page, group, i, f), fields=ROW_FIELDS, indent="\n    ",
                 fresh=(lambda i: parts.row(group, i)) if parts else None, child=options)


def _level(page: Page, group: str, parts: Parts | None = None) -> Level | None:
    if group == "cells":
        return cells_level(page, parts)
    if group in ("match_dims", "overlay_dims"):
        return rows_level(page, group, parts)
    return None


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
        level = _level(page, of, None) if of and slot.key in ("cells", "matchDims", "overlayDims") else None
        items = _kept_list(t, slot.value, level) if level else None
        if items:
            props.append(DocsText(key=slot.key, text=t[slot.lead:slot.value.start + 1], of=of,
                                  digest=group_digest(page, of or ""), items=items,
                                  close=t[slot.value.slots[-1].end:slot.end]))
        else:
            props.append(DocsText(key=slot.key, text=t[slot.lead:slot.end], of=of,
                                  digest=group_digest(page, of) if of else None))
    present = {MODELLED[s.key] for s in lit.slots if s.key in MODELLED}
    return DocsModule(path=path, head=t[:lit.start + 1], props=props,
                      close=t[lit.slots[-1].end if lit.slots else lit.start + 1:], carried=_carried(data),
                      absent={g: group_digest(page, g) for g in GROUPS if g not in present})


def _kept_list(t: str, arr: Value, level: Level) -> list[DocsText] | None:
    """A list kept entry by entry (None where it is not one entry per page entry, or empty)."""
    if arr.kind != "array" or not arr.slots or len(arr.slots) != level.count:
        return None
    return [_kept_entry(t, s, level, k) for k, s in enumerate(arr.slots)]


def _kept_entry(t: str, s: Slot, level: Level, k: int) -> DocsText:
    """Entry k kept property by property, each modelled one with the digest of the page field it holds."""
    c = s.value
    if c.kind != "object" or not c.slots:
        return DocsText(key=level.key(k), text=t[s.lead:s.end], digest=level.digest(k))
    fields = []
    for f in c.slots:
        g = level.fields.get(f.key or "")
        sub = _kept_list(t, f.value, level.child(k)) if g == "options" and level.child else None
        fields.append(DocsText(key=f.key, text=t[f.lead:f.value.start + 1] if sub else t[f.lead:f.end], of=g,
                               digest=_digest(level.field(k, g)) if g else None, items=sub or [],
                               close=t[f.value.slots[-1].end:f.end] if sub else ""))
    present = {level.fields[f.key] for f in c.slots if f.key in level.fields}
    return DocsText(key=level.key(k), text=t[s.lead:c.start + 1], digest=level.digest(k), items=fields,
                    close=t[c.slots[-1].end:s.end],
                    absent={g: _digest(level.field(k, g)) for g in level.groups if g not in present})


def assemble(page: Page, parts: Parts, private: str) -> str:
    """The module text for `page` from its kept layout: kept text where the page still holds what was imported,
    hybridplan's rendering (`parts`) where it changed or is new; a changed cell, row or option keeps its unchanged
    properties and is written afresh only where it changed."""
    docs = page.docs
    assert docs is not None
    pieces: list[str] = []
    written: set[str] = set()
    for p in docs.props:
        if p.of == PRIVATE:
            pieces.append(p.text + private)
        elif p.of is None or p.digest == group_digest(page, p.of):
            pieces.append(p.whole())
        elif p.items and (level := _level(page, p.of, parts)) is not None:
            pieces.append(p.text + _list(p.items, level) + p.close)
        elif p.of not in written and (text := parts.group(p.of)):
            pieces.append("\n  " + text)
        written.add(p.of or "")
    for g in GROUPS:
        if g not in written and docs.absent.get(g) != group_digest(page, g) and (text := parts.group(g)):
            pieces.append("\n  " + text)
    if PRIVATE not in written:
        pieces.append(f"\n  {PRIVATE_NOTE}\n  {private}")
    return docs.head + ",".join(pieces) + docs.close


def _list(items: list[DocsText], level: Level) -> str:
    """The page's entries in order: the module's own where unchanged, edited in place where the module has the
    entry (same match or id), written afresh where it has none."""
    assert level.fresh is not None
    free = list(items)
    out = []
    for i in range(level.count):
        d = level.digest(i)
        kept = next((it for it in free if it.digest == d), None)
        if kept is not None:
            free.remove(kept)
            out.append(kept.whole())
            continue
        kept = next((it for it in free if it.key == level.key(i) and it.items), None)
        if kept is None:
            out.append(level.indent + level.fresh(i)[""])
            continue
        free.remove(kept)
        out.append(_edited(kept, i, level))
    return ",".join(out)


_LEAD = re.compile(r"(?:\s|//[^\n]*|/\*.*?\*/)*", re.S)


def _lead(text: str) -> str:
    m = _LEAD.match(text)
    return m.group() if m else ""


def _edited(kept: DocsText, i: int, level: Level) -> str:
    """A kept entry with the fields the page changed written afresh in place (a group with two keys, such as the
    badge's `verified`/`verificationStatus`, in the place of its first), gained fields added last, dropped ones
    left out; a changed `options` list is edited option by option."""
    assert level.fresh is not None
    fresh = level.fresh(i)
    parts: list[str] = []
    done: set[str] = set()
    for f in kept.items:
        if f.of is None or f.digest == _digest(level.field(i, f.of)):
            parts.append(f.whole())
        elif f.of == "options" and f.items and level.child is not None:
            parts.append(f.text + _list(f.items, level.child(i)) + f.close)
        elif f.of not in done and fresh.get(f.of):
            parts.append(_lead(f.text) + fresh[f.of])
        done.add(f.of or "")
    indent = _lead(kept.items[-1].text) if kept.items else level.indent + "  "
    for g in level.groups:
        if g not in done and kept.absent.get(g) != _digest(level.field(i, g)) and fresh.get(g):
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
