"""A docs config module's behaviour on every selection, read from its Node evaluation with the docs' Deploy engine
semantics (reference/cookbook-semantics.md §2-3), and the same observations of a hybridplan page.

Both sides are keyed by hybridplan ids (docs dim ids in kebab case), so an import, an export and a round trip are
compared observation by observation: the cell, every option's visibility, disabled state, reason, flags, env, hints
and strip list, the badge, the model name, the docker image, and the composed flags, env and hints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hybridplan.cookbook import compose as C, text as T
from hybridplan.cookbook.conditions import evaluate
from hybridplan.cookbook.docs.node_eval import Evaluation
from hybridplan.cookbook.docs.recover import Point, Space
from hybridplan.cookbook.schema import Page, expand

DEFAULT_REASON = "Not supported for current selection"  # the docs' tooltip without a disableReason
DEFAULT_IMAGE = "lmsysorg/sglang:dev"
LEGACY = (("variants", "variant"), ("quantizations", "quant"), ("strategies", "strategy"), ("nodesOptions", "nodes"))
STATUSES = ("verified", "in-progress", "unverified")
PROBE_RATIO = "R"  # stands in for the calculator's ratio when composing both sides
# the docs' lookup keys for a selection's model name and docker image, tried in this order (reference §2)
NAME_LADDER = (("hw", "variant", "quant"), ("variant", "quant"), ("hw", "quant"), ("quant",), ("hw",), ("default",))
IMAGE_LADDER = (("hw", "quant", "strategy"), ("hw", "quant"), ("hw",))


def ladder_key(rung: tuple[str, ...], sel: dict[str, Any]) -> str:
    """A lookup key as the docs build it (`${hw}|${quant}`; a dim the page lacks reads `undefined`)."""
    return "default" if rung == ("default",) else "|".join(str(sel.get(x, "undefined")) for x in rung)


def our_id(docs_id: object) -> str:
    """A docs id as a hybridplan id: camelCase to kebab-case (`ssmDtype` -> `ssm-dtype`), lower case."""
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", str(docs_id)).lower()
    return re.sub(r"[^a-z0-9._-]+", "-", s).strip("-") or "x"


def docs_id(our: str) -> str:
    """The inverse for dim ids: kebab-case to camelCase (`ssm-dtype` -> `ssmDtype`)."""
    head, *rest = our.split("-")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def is_fn(v: Any) -> bool:
    return isinstance(v, dict) and "$fn" in v


def bad(v: Any) -> str | None:
    """Why an evaluated value is unusable (a throw, a non-value), else None."""
    if isinstance(v, dict) and "$error" in v:
        return f"throws: {v['$error']}"
    return None


@dataclass
class DocsPage:
    """A docs module's evaluation in hybridplan ids: the space, the raw rows and cells, and its functions' values."""

    ev: Evaluation
    space: Space
    kinds: dict[str, str]  # our dim id -> hw | match | overlay
    rows: dict[str, dict[str, Any]]  # our dim id -> raw dim (match or overlay)
    row_paths: dict[str, tuple[Any, ...]]  # our dim id -> path of the raw dim in the module
    option_ids: dict[str, dict[str, str]]  # our dim id -> docs option id -> our option id
    cells: list[dict[str, Any]]
    cell_at: dict[Point, int]  # the first cell of each selection that has one
    fns: dict[tuple[Any, ...], dict[str, Any]]

    @classmethod
    def of(cls, ev: Evaluation) -> "DocsPage":
        d = ev.data
        rows: dict[str, dict[str, Any]] = {}
        paths: dict[str, tuple[Any, ...]] = {}
        kinds: dict[str, str] = {}
        opt_ids: dict[str, dict[str, str]] = {}
        raw_match = ([(("matchDims", i), r) for i, r in enumerate(d.get("matchDims") or [])]
                     if isinstance(d.get("matchDims"), list)
                     else [((k,), {"id": i, "options": d[k]}) for k, i in LEGACY if isinstance(d.get(k), list)])
        raw_over = [(("overlayDims", i), r) for i, r in enumerate(d.get("overlayDims") or [])
                    if isinstance(r, dict) and r.get("kind") != "number"]
        dims: list[str] = []
        options: list[tuple[str, ...]] = []
        for dim in ev.dims:
            oid = our_id(dim["id"])
            kinds[oid] = dim["kind"]
            opt_ids[oid] = {o: (o if dim["kind"] == "hw" else our_id(o)) for o in dim["options"]}
            dims.append(oid)
            options.append(tuple(opt_ids[oid][o] for o in dim["options"]))
        for path, r in raw_match + raw_over:
            oid = our_id(r.get("id"))
            rows[oid], paths[oid] = r, path
        space = Space(dims=tuple(dims), options=tuple(options))
        cells = [c for c in d.get("cells") or [] if isinstance(c, dict)]
        page = cls(ev=ev, space=space, kinds=kinds, rows=rows, row_paths=paths, option_ids=opt_ids, cells=cells,
                   cell_at={}, fns={tuple(f["path"]): f for f in ev.functions})
        match_dims = [k for k, dim in enumerate(ev.dims) if dim["kind"] != "overlay"]
        first: dict[tuple[Any, ...], int] = {}
        for i, c in enumerate(cells):
            m = c.get("match") or {}
            key = tuple(page.option_ids[dims[k]].get(str(m.get(ev.dims[k]["id"])), None) for k in match_dims)
            first.setdefault(key, i)
        for p in space.points():
            key = tuple(space.options[k][p[k]] for k in match_dims)
            if key in first:
                page.cell_at[p] = first[key]
        return page

    def points(self) -> list[Point]:
        return self.space.points()

    def value(self, path: tuple[Any, ...], literal: Any, point: Point) -> Any:
        """A field's value at a selection: its function's value there, else the literal."""
        f = self.fns.get(tuple(path))
        if f is None:
            return literal
        idx = 0
        for k, n in zip(point, (len(o) for o in self.space.options)):
            idx = idx * n + k
        return f["values"][f["at"][idx]]

    def option_list(self, dim: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        r = self.rows.get(dim)
        if r is None:
            return []
        return [(self.row_paths[dim] + ("options", i), o) for i, o in enumerate(r.get("options") or [])
                if isinstance(o, dict)]

    def reason(self, path: tuple[Any, ...], opt: dict[str, Any], point: Point) -> str | None:
        """The shown tooltip while greyed out (disableReason, else the docs' default), None when enabled."""
        if not self.value(path + ("disabled",), opt.get("disabled", False), point):
            return None
        r = self.value(path + ("disableReason",), opt.get("disableReason"), point)
        return r if isinstance(r, str) and r else DEFAULT_REASON

    def status(self, ci: int, point: Point) -> str:
        c = self.cells[ci]
        s = self.value(("cells", ci, "verificationStatus"), c.get("verificationStatus"), point)
        if s is None or (isinstance(s, dict) and "$undefined" in s):
            return "verified" if c.get("verified") is True else "unverified"
        return s if s in STATUSES else "unverified"

    def _ladder(self, table: dict[str, Any], keys: tuple[tuple[str, ...], ...], sel: dict[str, Any], default: str) -> str:
        for key in keys:
            v = table.get(ladder_key(key, sel))
            if isinstance(v, str):
                return v
        return default

    def docs_sel(self, point: Point) -> dict[str, str]:
        """The selection with docs dim and option ids, as the module's functions see it."""
        out: dict[str, str] = {}
        for k, dim in enumerate(self.ev.dims):
            out[dim["id"]] = dim["options"][point[k]]
        return out

    def model_name(self, point: Point) -> str:
        return self._ladder(self.ev.data.get("modelNames") or {}, NAME_LADDER, self.docs_sel(point), "")

    def docker_image(self, point: Point) -> str:
        return self._ladder(self.ev.data.get("dockerImages") or {}, IMAGE_LADDER, self.docs_sel(point), DEFAULT_IMAGE)

    def observe(self, point: Point) -> dict[str, Any]:
        """Everything the Deploy panel shows for one selection that has a cell."""
        sel = self.space.selection(point)
        ci = self.cell_at[point]
        cell = self.cells[ci]
        obs: dict[str, Any] = {"cell": ci, "status": self.status(ci, point), "model": self.model_name(point),
                               "image": self.docker_image(point), "options": {}, "rows": {}}
        add: list[str] = []
        strip: list[str] = []
        env: list[str] = list(cell.get("env") or [])
        hints: list[str] = []
        for dim in self.space.dims:
            if dim not in self.rows:
                continue
            row = self.rows[dim]
            rp = self.row_paths[dim]
            row_visible = bool(self.value(rp + ("showWhen",), row.get("showWhen", True), point))
            obs["rows"][dim] = row_visible
            for path, o in self.option_list(dim):
                oid = self.option_ids[dim].get(str(o.get("id")), our_id(o.get("id")))
                v: dict[str, Any] = {"visible": row_visible and bool(self.value(path + ("showWhen",), o.get("showWhen", True), point)),
                     "reason": self.reason(path, o, point)}
                if self.kinds[dim] == "overlay":
                    for key, field in (("flags", "flags"), ("env", "env"), ("hints", "hints"),
                                       ("strip", "stripPrefixes")):
                        got = self.value(path + (field,), o.get(field, []), point)
                        v[key] = got if isinstance(got, list) else got
                    if row_visible and sel[dim] == oid and v["reason"] is None:
                        add += v["flags"] if isinstance(v["flags"], list) else []
                        strip += v["strip"] if isinstance(v["strip"], list) else []
                        env += v["env"] if isinstance(v["env"], list) else []
                        hints += v["hints"] if isinstance(v["hints"], list) else []
                obs["options"][f"{dim}.{oid}"] = v
        flags = docs_compose(list(cell.get("flags") or []), tuple(add), tuple(strip))
        obs["composed"] = {"flags": flags, "env": env, "hints": hints}
        return obs

    def observations(self) -> dict[Point, dict[str, Any]]:
        return {p: self.observe(p) for p in self.points() if p in self.cell_at}


def docs_compose(cell_flags: list[str], add: tuple[str, ...], strip: tuple[str, ...]) -> list[str]:
    """The docs Deploy panel's composition: the calculator's ratio inserted into the raw cell before `--host`
    (_deployment.jsx cellWithRatio), then overlayCompose with the ratio an ordinary, strippable flag (§3.5, §7.15)."""
    flags = list(cell_flags)
    if not any(C.family(f) == C.RATIO for f in flags):
        at = next((i for i, f in enumerate(flags) if C.family(f).startswith("--host")), len(flags))
        flags = flags[:at] + [f"{C.RATIO} {PROBE_RATIO}"] + flags[at:]
    return C.overlay_compose(flags, add, strip)


def observe_page(page: Page, sel: dict[str, str], docs_ratio: bool = False) -> dict[str, Any] | None:
    """The same observations of a hybridplan page (None when the selection has no cell). `docs_ratio` composes
    the ratio as the docs do (an overlay that strips the family drops it, one that only adds it doubles it) instead
    of hybridplan's ratio slot."""
    from hybridplan.cookbook.selection import find_cell

    ref = find_cell(page, sel)
    if ref is None:
        return None
    cell = ref.cell
    obs: dict[str, Any] = {"cell": ref.index, "status": cell.verification.status_for(sel),
                           "model": T.first_match(page.model_names, sel) or "",
                           "image": T.first_match(page.docker_images, sel) or DEFAULT_IMAGE, "options": {}, "rows": {}}
    for dim in page.match_dims + page.overlay_dims:
        row_visible = evaluate(dim.show_when, sel)
        obs["rows"][dim.id] = row_visible
        for o in dim.options:
            v: dict[str, Any] = {"visible": row_visible and evaluate(o.show_when, sel), "reason": o.disabled_reason(sel)}
            if page.is_overlay(dim.id):
                v.update(flags=expand(o.flags, sel), env=expand(o.env, sel), hints=expand(o.hints, sel),
                         strip=expand(dim.strip, sel) + expand(o.strip, sel))
            obs["options"][f"{dim.id}.{o.id}"] = v
    picks = C.overlay_picks(page, sel)
    if docs_ratio:
        flags = docs_compose(cell.flags, picks.flags, picks.strip)
    else:
        flags = C.fill_ratio_slot(C.overlay_compose(C.with_ratio_slot(cell.flags), picks.flags, picks.strip),
                                  PROBE_RATIO)
    obs["composed"] = {"flags": flags, "env": C.merge_env(cell.env, picks.env), "hints": list(picks.hints)}
    return obs


def differences(a: object, b: object, where: str = "") -> list[str]:
    """Paths where two observations differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in list(a) + [k for k in b if k not in a]:
            out += differences(a.get(k), b.get(k), f"{where}.{k}" if where else k)
        return out
    return [] if a == b else [f"{where}: {a!r} vs {b!r}"]
