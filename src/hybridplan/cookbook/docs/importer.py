"""`cookbook import`: a docs config module (evaluated by Node) as a hybridplan page, functions recovered as data.

Every selection-dependent function is read off its values on the selections that have a cell (where the Deploy panel
uses it) and written back as conditions and items (hybridplan.cookbook.docs.recover). What cannot be expressed is
listed as a finding; the written page is then compared with the module on every selection
(hybridplan.cookbook.docs.view).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import yaml

from hybridplan.cookbook.docs import recover as R
from hybridplan.cookbook.docs.keep import PRIVATE, keep
from hybridplan.cookbook.docs.literal import Refused, scan
from hybridplan.cookbook.docs.merge import merge_page, provenance
from hybridplan.cookbook.docs.node_eval import Evaluation
from hybridplan.cookbook.docs.view import DocsPage, bad, differences, is_fn, observe_page, our_id
from hybridplan.cookbook.pages import hardware_catalog, read_page_text
from hybridplan.cookbook.schema import Page
from hybridplan.errors import BadInput
from hybridplan.textfile import read_text

MAX_LISTED = 20
MAX_OVERLAY_BYTES = 1 << 20


@dataclass
class Imported:
    """The page as YAML-ready data, the loaded page, and what was not exact (empty: exact on every selection)."""

    data: dict[str, Any]
    page: Page | None
    findings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    selections: int = 0
    compared: int = 0
    ratio_divergences: int = 0
    header: str = ""  # the merged page's leading comment block

    @property
    def exact(self) -> bool:
        return not self.findings

    def yaml(self) -> str:
        return self.header + yaml.dump(self.data, Dumper=_Indented, sort_keys=False, allow_unicode=True, width=118)


class _Indented(yaml.SafeDumper):
    """Block lists indented under their key, as the bundled pages are written; shared values are written out in full
    (no anchors), so every cell's lists stay its own (`results export` appends to one cell's measurements)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def represent_str(self, data: str) -> yaml.ScalarNode:
        """Module text kept verbatim reads as a block, line for line."""
        return self.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data.strip() else None)

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


_Indented.add_representer(str, _Indented.represent_str)


class _Builder:
    def __init__(self, ev: Evaluation):
        self.d = DocsPage.of(ev)
        self.ev = ev
        self.findings: list[str] = []
        self.notes: list[str] = []
        self.care = [p for p in self.d.points() if p in self.d.cell_at]

    def _where(self, path: tuple[Any, ...]) -> str:
        return ".".join(str(x) for x in path)

    def _table(self, path: tuple[Any, ...], literal: Any, points: list[R.Point],
               check: Callable[[Any], str | None]) -> dict[R.Point, Any]:
        """{point: value} for a field on `points`, leaving out (and listing) points where it throws or is malformed;
        a point without a cell is left out silently (the panel never composes there)."""
        out: dict[R.Point, Any] = {}
        broken: tuple[R.Point, str] | None = None
        for p in points:
            v = self.d.value(path, literal, p)
            why = bad(v) or check(v)
            if why is None:
                out[p] = v
            elif broken is None and p in self.d.cell_at:
                broken = (p, why)
        if broken:
            self.findings.append(f"{self._where(path)}: {broken[1]} at {self.d.docs_sel(broken[0])}")
        return out

    def boolean(self, path: tuple[Any, ...], literal: Any, points: list[R.Point] | None = None) -> Any:
        if not is_fn(literal):
            return bool(literal) if literal is not None else True
        t = self._table(path, literal, points or self.care, lambda v: None)
        return R.condition(self.d.space, {p: bool(v) for p, v in t.items()})

    def strings(self, path: tuple[Any, ...], literal: Any) -> list[Any]:
        def ok(v: Any) -> str | None:
            return None if isinstance(v, list) and all(isinstance(s, str) for s in v) else "not a list of strings"

        if not is_fn(literal):
            if literal is None:
                return []
            if ok(literal):
                self.findings.append(f"{self._where(path)}: {ok(literal)}")
                return []
            return list(literal)
        return R.items(self.d.space, self._table(path, literal, self.care, ok))

    def option(self, dim: str, path: tuple[Any, ...], o: dict[str, Any], overlay: bool) -> dict[str, Any]:
        oid = our_id(o.get("id"))
        if oid != o.get("id"):
            self.notes.append(f"{self._where(path)}: option id {o.get('id')!r} is {oid!r} here")
        out: dict[str, Any] = {"id": oid, "label": str(o.get("label", o.get("id")))}
        if isinstance(o.get("subtitle"), str):
            out["subtitle"] = o["subtitle"]
        # every selection: an option hidden where no cell exists is still hidden there (a condition read only where
        # cells exist may name the option's own row, which hides every option on a cell-less selection)
        show = self.boolean(path + ("showWhen",), o.get("showWhen", True), self.d.points())
        if show is not True:
            out["show_when"] = show
        if is_fn(o.get("disabled")) or is_fn(o.get("disableReason")) or o.get("disabled") is True:
            # every selection, not only those with a cell: a rule that greys an option only where no cell
            # exists still says why (and is what the export writes back)
            shown = {p: self.d.reason(path, o, p) for p in self.d.points()}
            rules = []
            for reason in dict.fromkeys(r for r in shown.values() if r is not None):
                rules.append({"when": R.condition(self.d.space, {p: r == reason for p, r in shown.items()}),
                              "reason": reason})
            if rules:
                out["disabled"] = rules
        if overlay:
            for key, field_ in (("flags", "flags"), ("env", "env"), ("hints", "hints"), ("strip", "stripPrefixes")):
                items = self.strings(path + (field_,), o.get(field_))
                if items:
                    out[key] = items
        if isinstance(o.get("nnodes"), int):
            out["nnodes"] = o["nnodes"]
        return out

    def dimension(self, dim: str) -> dict[str, Any]:
        row = self.d.rows[dim]
        path = self.d.row_paths[dim]
        overlay = self.d.kinds[dim] == "overlay"
        out: dict[str, Any] = {"id": dim, "title": str(row.get("title", LEGACY_TITLES.get(dim, dim)))}
        out["options"] = [self.option(dim, p, o, overlay) for p, o in self.d.option_list(dim)]
        if overlay and row.get("default") is not None:
            out["default"] = our_id(row["default"])
        show = self.boolean(path + ("showWhen",), row.get("showWhen", True), self.d.points())
        if show is not True:
            out["show_when"] = show
        if row.get("stripPrefixes"):
            self.notes.append(f"{self._where(path)}.stripPrefixes: row-level strips are ignored by the docs' "
                              "engine, so they are carried as is, not imported as hybridplan strips")
        return out

    def cell(self, i: int, c: dict[str, Any]) -> dict[str, Any]:
        path = ("cells", i)
        match = {}
        for k, dim in enumerate(self.ev.dims):
            if dim["kind"] == "overlay":
                continue
            v = (c.get("match") or {}).get(dim["id"])
            match[our_id(dim["id"])] = self.d.option_ids[our_id(dim["id"])].get(str(v), str(v))
        out: dict[str, Any] = {"match": match}
        for key in ("flags", "env"):
            if is_fn(c.get(key)):
                self.findings.append(f"{self._where(path)}.{key}: a function on a cell cannot be expressed")
            elif c.get(key):
                out[key] = [str(f) for f in c[key]]
        for key in ("warn", "note"):
            if isinstance(c.get(key), str):
                out[key] = c[key]
            elif is_fn(c.get(key)):
                self.findings.append(f"{self._where(path)}.{key}: a function here cannot be expressed")
        if c.get("redirect") is True:
            out["redirect"] = True
        if isinstance(c.get("nnodes"), int) and c["nnodes"] >= 1:
            out["nnodes"] = c["nnodes"]
        mine = [p for p, ci in self.d.cell_at.items() if ci == i]
        statuses = {p: self.d.status(i, p) for p in mine}
        if is_fn(c.get("verificationStatus")):
            self._table(path + ("verificationStatus",), c.get("verificationStatus"), mine,
                        lambda v: None if v in R_STATUSES or (isinstance(v, dict) and "$undefined" in v)
                        else f"returned {v!r}")
        counts = Counter(statuses.values())
        base = counts.most_common(1)[0][0] if counts else (
            "verified" if c.get("verified") is True and c.get("verificationStatus") in (None, "verified")
            else c.get("verificationStatus") if c.get("verificationStatus") in R_STATUSES else "unverified")
        verification: dict[str, Any] = {"status": base}
        rules = [{"when": R.condition(self.d.space, {p: s == st for p, s in statuses.items()}), "status": st}
                 for st in dict.fromkeys(statuses.values()) if st != base]
        if rules:
            verification["rules"] = rules
        raw = c.get(PRIVATE)
        private: dict[str, Any] = raw if isinstance(raw, dict) else {}  # keep.cell_private: what no docs key holds
        out.update({k: v for k, v in private.items() if k != "verification"})
        verification.update(private.get("verification") or {})
        verification["status"], verification["rules"] = base, rules
        if not rules:
            verification.pop("rules")
        images = Counter(self.d.docker_image(p) for p in mine)
        if ({base} | set(statuses.values())) & {"verified", "in-progress"} and not (
                verification.get("build") or verification.get("image")) and images.most_common(1)[0][0]:
            # the docs name no build for a status they claim: the image the Deploy panel runs the cell with
            verification["image"] = images.most_common(1)[0][0]
        out["verification"] = verification
        return out

    def named(self, of: Callable[[R.Point], str]) -> list[dict[str, Any]]:
        """First-match rules that give each selection's value (model names, docker images)."""
        values = {p: of(p) for p in self.care}
        names = [v for v in dict.fromkeys(values.values()) if v]
        if len(names) == 1 and all(values.values()):
            return [{"value": names[0]}]
        return [{"when": R.condition(self.d.space, {p: v == n for p, v in values.items()}), "value": n}
                for n in names]

    def hardware(self) -> list[dict[str, Any]]:
        known = {h.id for h in hardware_catalog()}
        own = {str(h.get("id")): h for h in self.ev.data.get("hardware") or [] if isinstance(h, dict)}
        out = []
        for hw in self.d.space.options[0]:
            if hw in known:
                continue
            h = own.get(hw, {})
            if not h:
                self.notes.append(f"hardware {hw!r} is neither in the shared hardware list nor declared by the page")
            vendor = str(h.get("vendor", "other"))
            out.append({"id": hw, "label": str(h.get("label", hw)), "group": vendor,
                        "vendor": "amd" if vendor == "amd" else "nvidia" if vendor in ("nvidia", "blackwell",
                                                                                        "hopper") else "other"})
        return out

    def page(self, page_id: str | None) -> dict[str, Any]:
        d = self.ev.data
        name = str(d.get("modelName") or page_id or "page")
        out: dict[str, Any] = {"id": page_id or our_id(name), "model": name,
                               "source": f"SGLang docs config module {self.ev.origin}, imported by "
                                         f"`hybridplan cookbook import` (Node {self.ev.node})",
                               "supported_hardware": list(self.d.space.options[0])}
        hw = self.hardware()
        if hw:
            out["hardware"] = hw
        out["match_dims"] = [self.dimension(x) for x in self.d.space.dims if self.d.kinds[x] == "match"]
        out["overlay_dims"] = [self.dimension(x) for x in self.d.space.dims if self.d.kinds[x] == "overlay"]
        out["cells"] = [self.cell(i, c) for i, c in enumerate(self.d.cells)]
        out["model_names"] = self.named(self.d.model_name) or [{"value": ""}]
        out["docker_images"] = self.named(self.d.docker_image)
        out["program"] = d["dockerRunCommand"] if isinstance(d.get("dockerRunCommand"), str) else "sglang serve"
        if is_fn(d.get("dockerRunCommand")) or is_fn(d.get("runModes")):
            self.notes.append("dockerRunCommand/runModes functions are not imported")
        if isinstance(d.get("placeholders"), dict):
            out["placeholders"] = {k: {x: str(v[x]) for x in ("target", "label", "default") if x in v}
                                   for k, v in d["placeholders"].items() if isinstance(v, dict)}
        if isinstance(d.get("curl"), str):
            out["curl"] = d["curl"]
        elif is_fn(d.get("curl")):
            curls = {self.d.value(("curl",), None, p) for p in self.care}
            if len(curls) == 1 and isinstance(next(iter(curls)), str):
                out["curl"] = next(iter(curls))
            else:
                self.findings.append("curl: a function whose text varies with the selection cannot be expressed")
        if isinstance(d.get("multiNodeHints"), dict):
            out["multi_node_hints"] = {k: list(v) for k, v in d["multiNodeHints"].items() if isinstance(v, list)}
        if isinstance(d.get("dockerMounts"), list):
            out["docker_mounts"] = [str(m) for m in d["dockerMounts"]]
        bench = d.get("benchmarkCommands")
        if isinstance(bench, dict):
            b: dict[str, Any] = {}
            if isinstance(bench.get("speed"), str):
                b["speed"] = bench["speed"]
            acc = bench.get("accuracy") or {}
            b["accuracy"] = {k: v for k, v in acc.items() if isinstance(v, str)}
            if any(not isinstance(v, str) for v in acc.values()):
                self.notes.append("benchmarkCommands.accuracy: per-variant templates are not imported")
            if isinstance(bench.get("numPromptsByConc"), dict):
                b["num_prompts_by_concurrency"] = {int(k): int(v) for k, v in bench["numPromptsByConc"].items()}
            out["benchmark_commands"] = {k: v for k, v in b.items() if v}
        if self.d.space.dims and not any(k == "match" for k in self.d.kinds.values()) and not d.get("cells"):
            self.findings.append("the module has no cells")
        for key, value in (d.get(PRIVATE) or {}).items():
            out[key] = value
        for e in self.ev.errors:
            self.findings.append(e)
        return out


R_STATUSES = ("verified", "in-progress", "unverified")


@dataclass
class Comparison:
    """Selections where the page and the module disagree (first MAX_LISTED), how many were compared, and where
    hybridplan's own ratio composition departs from the docs' on the same page data (reference §7.15-16)."""

    findings: list[str] = field(default_factory=list)
    compared: int = 0
    ratio_divergences: int = 0
    first_divergence: str | None = None


def _reseated(docs: DocsPage, want: dict[str, Any], sel: dict[str, str]) -> bool:
    """The panel moves a pick off an option hidden in a visible row before it composes (a hidden row's pick
    contributes nothing and composes as usual)."""
    return any(want["rows"].get(d, True) and not want["options"].get(f"{d}.{sel[d]}", {}).get("visible", True)
               for d in docs.space.dims if docs.kinds[d] == "overlay")


def compare(docs: DocsPage, page: Page, limit: int = MAX_LISTED) -> Comparison:
    """The page against the module on every selection with a cell, composing the ratio as the docs do; then
    hybridplan's own composition of the same page, where it differs, counted as a deliberate divergence."""
    out = Comparison()
    for p, want in docs.observations().items():
        sel = docs.space.selection(p)
        if _reseated(docs, want, sel):
            want = {**want, "composed": None}
        got = observe_page(page, sel, docs_ratio=True)
        if got is not None and want["composed"] is None:
            got = {**got, "composed": None}
        out.compared += 1
        diff = differences(want, got or {})
        if diff and len(out.findings) < limit:
            out.findings.append(f"{docs.docs_sel(p)}: " + "; ".join(diff[:3]))
        ours = observe_page(page, sel)
        if (not diff and got is not None and ours is not None and got["composed"] is not None
                and ours["composed"] != got["composed"]):
            out.ratio_divergences += 1
            if out.first_divergence is None:
                out.first_divergence = (f"{docs.docs_sel(p)}: docs {got['composed']['flags']} vs hybridplan "
                                        f"{ours['composed']['flags']}")
    return out


LEGACY_TITLES = {"variant": "Model Variant", "quant": "Quantization", "strategy": "Strategy", "nodes": "Nodes"}
UNKEEPABLE = {"$cycle": "a reference cycle", "$error": "a property that throws when read",
              "$unsupported": "a value that is not plain data"}


def refuse_unkeepable(value: Any, path: tuple[str | int, ...] = ()) -> None:
    """Refused (naming the construct and where) for a value the sandbox could not report as data or source."""
    if isinstance(value, dict):
        for tag, what in UNKEEPABLE.items():
            if tag in value:
                detail = f" ({value[tag]})" if tag == "$unsupported" else ""
                raise Refused(f"cannot keep {what}{detail} at {'.'.join(map(str, path)) or 'config'}; the module "
                              "was not imported")
        for k, v in value.items():
            refuse_unkeepable(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            refuse_unkeepable(v, path + (i,))


def _module_path(origin: str) -> str:
    """The module's path in the docs tree (from `docs/`), else its file name."""
    at = origin.replace("\\", "/").find("docs/src/snippets/")
    return origin[at:] if at >= 0 else Path(origin).name


def _load(imp: Imported, docs: DocsPage, what: str) -> Comparison | None:
    """Load imp.data as a page (a finding when it does not) and compare it with the module."""
    loaded = read_page_text(imp.yaml(), f"{imp.data['id']}.yaml")
    if loaded.page is None:
        e = loaded.errors[0]
        imp.findings.append(f"the {what} page does not load: {'.'.join(map(str, e.loc))}: {e.message}")
        imp.page = None
        return None
    imp.page = loaded.page
    return compare(docs, loaded.page)


def _overlay(path: str) -> tuple[dict[str, Any], str]:
    """The page to merge into (its data and leading comment block); BadInput when unreadable."""
    text = read_text(Path(path), limit=MAX_OVERLAY_BYTES)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BadInput(f"--merge {path}: not YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise BadInput(f"--merge {path}: not a cookbook page (no cells)")
    head = "".join(line + "\n" for line in text.splitlines()[:40] if line.startswith("#"))
    return data, head


@lru_cache(maxsize=1)
def _calculators() -> dict[str, dict[str, int]]:
    from hybridplan.packaged import data_yaml

    raw = data_yaml("docs_calculators.yaml")
    return {str(k): {"request_length": int(v["request_length"]), "concurrency": int(v["concurrency"])}
            for k, v in raw["calculators"].items()}


def calculator_workload(model_name: object) -> dict[str, int] | None:
    """The workload the docs' calculator for a page (by its modelName) starts from, when that page has one."""
    found = _calculators().get(str(model_name))
    return dict(found) if found else None


def import_evaluation(ev: Evaluation, page_id: str | None = None, merge: str | None = None,
                      origin: str | None = None, workload: dict[str, Any] | None = None) -> Imported:
    """The page for an evaluated module, checked against the module on every selection that has a cell; with
    `merge`, that page regenerated (docs-owned data from the module, its own additions kept) and checked again."""
    refuse_unkeepable(ev.data)
    layout = scan(ev.source, ev.data)
    b = _Builder(ev)
    data = b.page(page_id)
    if origin:
        data["source"] = provenance(origin, _module_path(ev.origin), ev.node)
    if not workload and merge is None and (workload := calculator_workload(ev.data.get("modelName"))):
        b.notes.append(f"workload: the docs' {ev.data.get('modelName')} calculator starts at L={workload['request_length']}"
                       f", C={workload['concurrency']} (data/docs_calculators.yaml); --workload overrides")
    if workload:
        data["workload"] = workload
    if "workload" not in data and merge is None:
        b.notes.append("no workload: the docs' ratio calculator keeps its defaults outside the module, so the page "
                       "pins no calculator ratio; pass --workload LENGTH,CONCURRENCY to set one")
    imp = Imported(data=data, page=None, findings=b.findings, notes=b.notes, selections=ev.selections)
    cmp = _load(imp, b.d, "imported")
    if cmp is None or imp.page is None:
        return imp
    docs = keep(layout, ev.data, imp.page, _module_path(ev.origin))
    if docs.carried:
        b.notes.append("carried verbatim, not modelled (see the page's docs.carried): " + ", ".join(docs.carried[:12])
                       + (f" and {len(docs.carried) - 12} more" if len(docs.carried) > 12 else ""))
    data["docs"] = docs.model_dump(mode="json", exclude_defaults=True)
    imp.page = imp.page.model_copy(update={"docs": docs})
    imp.compared = cmp.compared
    imp.findings += [f"differs from the module at {x}" for x in cmp.findings]
    if cmp.ratio_divergences:
        imp.notes.append(f"on {cmp.ratio_divergences} selections hybridplan composes the calculator's ratio where "
                         "the docs' Deploy panel drops or doubles it (an overlay strips --mamba-full-memory-ratio "
                         "without re-adding it, adds it without stripping it, or the cell sizes the state pool "
                         f"with --max-mamba-cache-size; reference §7.15-16), e.g. {cmp.first_divergence}")
    imp.ratio_divergences = cmp.ratio_divergences
    if merge is None:
        return imp
    overlay, imp.header = _overlay(merge)
    merged, notes = merge_page(data, overlay, data.get("source") or str(overlay.get("source", "")))
    if workload:
        merged["workload"] = workload
    imp.data = merged
    imp.notes += notes
    after = _load(imp, b.d, "merged")
    if after is not None and after.findings:
        imp.notes.append(f"the overlay changes what the panel shows on {len(after.findings)}"
                         f"{'+' if len(after.findings) == MAX_LISTED else ''} selections, e.g. {after.findings[0]}")
    return imp
