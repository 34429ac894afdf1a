"""`cookbook check`: validate pages against the schema, themselves, and the engine model.

Static rules look at the page as written (every branch of every condition); dynamic rules render every reachable
selection. GPU rules size the pools of every rendered command on its hardware (hybridplan.cookbook.fit).
Findings carry a severity: `error` and `warning` fail the check (exit 1), `info` does not. Unreadable input exits 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, cast

from pydantic import BaseModel

from hybridplan.cookbook import compose as C
from hybridplan.cookbook import selection as S
from hybridplan.cookbook.conditions import Condition, _Cond, evaluate, refs
from hybridplan.cookbook.engine_view import argv_of
from hybridplan.cookbook.matrix import landings
from hybridplan.cookbook.pages import at_version, bundled_ids, bundled_path, read_page_file, read_page_text
from hybridplan.cookbook.render import render_landed
from hybridplan.cookbook.schema import PLACEHOLDER, Page, every_string, expand
from hybridplan.cookbook.source import SourceMap, Unreadable, dotted
from hybridplan.errors import BadInput

if TYPE_CHECKING:
    from hybridplan.cookbook.docs.keep import ModuleLines
    from hybridplan.cookbook.pages import Loaded as LoadedPage
    from hybridplan.cookbook.schema import Option
    from hybridplan.engine.registry import FlagRegistry

# a strip entry: (group, dim index, option index or None for the row's own strip, flag family, row-level)
_StripKey = tuple[str, int, int | None, str, bool]

SEVERITIES = ("error", "warning", "info")
COND_FIELDS = ("when", "show_when", "covers")
REFUSABLE = ("flag-unknown", "engine", "pin-fit")  # what a cell's known_refused entry grades as info
INJECTED = ("--nnodes", "--node-rank", "--dist-init-addr")
# placeholders the renderer fills or leaves for the user on purpose
BUILTIN_KEYS = {"MODEL_NAME", "NODE_RANK", "NODE0_IP"}
BENCH_KEYS = {"DATASET", "ISL", "OSL", "NUM_PROMPTS", "MAX_CONCURRENCY"}


@dataclass(frozen=True)
class Finding:
    severity: str
    rule: str
    message: str
    origin: str
    line: int | None = None
    selection: dict[str, Any] | None = None

    @property
    def where(self) -> str:
        return f"{self.origin}:{self.line}" if self.line else self.origin

    def as_dict(self) -> dict[str, Any]:
        return {"severity": self.severity, "rule": self.rule, "message": self.message, "file": self.origin,
                "line": self.line, "selection": self.selection}


@dataclass
class Report:
    files: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    docs: bool = False  # a docs tree (`check --docs`): only errors fail, an unreadable module among them

    @property
    def failing(self) -> list[Finding]:
        return [f for f in self.findings if f.severity != "info"]

    @property
    def exit_code(self) -> int:
        """0 clean, 1 findings, 2 unreadable input; over a docs tree 1 for any error (an unreadable module
        included) and 0 when only warnings or info remain."""
        if self.docs:
            return 1 if self.unreadable or any(f.severity == "error" for f in self.findings) else 0
        return 2 if self.unreadable else 1 if self.failing else 0

    def summary(self) -> str:
        counts = ", ".join(f"{sum(f.severity == s for f in self.findings)} {s}" for s in SEVERITIES)
        bad = f"; {len(self.unreadable)} unreadable" if self.unreadable else ""
        return f"{len(self.files)} page(s): {counts}{bad}"

    def per_file(self) -> list[dict[str, Any]]:
        """One entry per checked file: its path and how many findings of each severity it has."""
        out = []
        for path in self.files:
            mine = [f for f in self.findings if f.origin == path]
            out.append({"file": path, "unreadable": any(f.rule == "unreadable" for f in mine),
                        **{s: sum(f.severity == s for f in mine) for s in SEVERITIES}})
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"files": self.files, "findings": [f.as_dict() for f in self.findings], "unreadable": self.unreadable,
                "pages": self.per_file(), "exit_code": self.exit_code, "summary": self.summary()}


class _Collector:
    """Findings for one page, located through its source map; identical findings are kept once. An engine finding
    on a cell the page marks known-refused (for that selection) is info naming the recorded reason."""

    def __init__(self, src: "SourceMap | ModuleLines", page: Page | None = None):
        self.src = src
        self.page = page
        self.out: list[Finding] = []
        self._seen: set[Any] = set()

    def _known(self, rule: str, loc: tuple[Any, ...], selection: dict[str, Any] | None) -> str | None:
        if self.page is None or rule not in REFUSABLE or len(loc) < 2 or loc[0] != "cells":
            return None
        for k in self.page.cells[loc[1]].known_refused:
            if k.when is True or (selection is not None and evaluate(k.when, selection)):
                return f"{k.reason} ({k.source})"
        return None

    def add(self, severity: str, rule: str, message: str, loc: tuple[Any, ...] = (), selection: dict[str, Any] | None = None) -> None:
        known = self._known(rule, loc, selection)
        if known and severity != "info":
            severity, message = "info", f"known refusal, {known}: {message}"
        key = (severity, rule, message, loc)
        if key in self._seen:
            return
        self._seen.add(key)
        self.out.append(Finding(severity=severity, rule=rule, message=message, origin=self.src.origin,
                                line=self.src.line(loc) if loc else None, selection=selection))


# ---------------------------------------------------------------------------------------------- walking the page


def _walk(obj: object, loc: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str, object]]:
    """(location, field name, value) for every field of every model in the page, YAML keys (aliases) as names."""
    if isinstance(obj, BaseModel) and not isinstance(obj, _Cond):
        for name, info in type(obj).model_fields.items():
            key = info.alias or name
            value = getattr(obj, name)
            yield loc + (key,), key, value
            yield from _walk(value, loc + (key,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _walk(v, loc + (i,))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, loc + (k,))


def _conditions(page: Page) -> Iterator[tuple[tuple[Any, ...], "Condition"]]:
    for loc, key, value in _walk(page):
        if key in COND_FIELDS:
            yield loc, cast("Condition", value)


def _option_ids(page: Page) -> dict[str, list[str]]:
    ids = {"hw": [h.id for h in page.hardware]}
    ids.update({d.id: [o.id for o in d.options] for d in page.match_dims + page.overlay_dims})
    return ids


def _contribution_strings(page: Page) -> Iterator[tuple[tuple[Any, ...], str, str]]:
    """(location, kind, string) for every flag/strip/env string an overlay or match row can contribute."""
    for group in ("match_dims", "overlay_dims"):
        for i, dim in enumerate(getattr(page, group)):
            for loc, s in every_string(dim.strip):
                yield (group, i, "strip") + loc, "strip", s
            for j, opt in enumerate(dim.options):
                for kind in ("flags", "strip", "env"):
                    for loc, s in every_string(getattr(opt, kind)):
                        yield (group, i, "options", j, kind) + loc, kind, s


# ---------------------------------------------------------------------------------------------- static rules


def _check_conditions(page: Page, out: _Collector) -> None:
    """Every dim and option a condition names exists; a prefix matches some option (the quant-id drift)."""
    ids = _option_ids(page)
    for loc, cond in _conditions(page):
        for kind, dim, value in refs(cond):
            if dim not in ids:
                out.add("error", "condition", f"condition names dimension {dim!r}, which the page does not have "
                        f"({', '.join(ids)})", loc)
            elif kind == "id" and value not in ids[dim]:
                out.add("error", "condition", f"condition names {dim}={value!r}, not an option of {dim} "
                        f"({', '.join(ids[dim])})", loc)
            elif kind == "prefix" and not any(o.startswith(value) for o in ids[dim]):
                out.add("error", "condition", f"prefix {value!r} matches no option of {dim} ({', '.join(ids[dim])})",
                        loc)


def _check_cells(page: Page, out: _Collector) -> None:
    ids = _option_ids(page)
    want = set(page.dims)
    seen: dict[tuple[Any, ...], int] = {}
    for i, cell in enumerate(page.cells):
        keys = set(cell.match)
        if keys != want:
            missing, extra = sorted(want - keys), sorted(keys - want)
            out.add("error", "cell-match", "match must name exactly hw and the match dims"
                    + (f"; missing {', '.join(missing)}" if missing else "")
                    + (f"; unknown {', '.join(extra)}" if extra else ""), ("cells", i, "match"))
        for dim, value in cell.match.items():
            for v in (value if isinstance(value, list) else [value]):
                if dim in ids and v not in ids[dim]:
                    out.add("error", "cell-match", f"{dim}={v!r} is not an option of {dim} ({', '.join(ids[dim])})",
                            ("cells", i, "match", dim))
        fams = [C.family(f) for f in cell.flags]
        for j, fam in enumerate(fams):
            if fam in INJECTED:
                out.add("error", "cell-flags", f"{fam} is injected by the renderer for multi-node selections; "
                        "cells stay single-node (set the nodes dim or the cell's nnodes)", ("cells", i, "flags", j))
            if fam in fams[:j]:
                out.add("error", "duplicate-flag", f"{fam} appears twice in the cell", ("cells", i, "flags", j))
        if "--model-path" not in fams and not cell.redirect:
            out.add("error", "cell-flags", "the cell has no --model-path (use --model-path {{MODEL_NAME}})",
                    ("cells", i, "flags"))
        if "--host" not in fams and not cell.redirect:
            out.add("warning", "cell-flags", "no --host: the calculator's ratio and new flags go before --host by "
                    "convention, so they land at the end instead", ("cells", i, "flags"))
        keys_env = [e.partition("=")[0] for e in cell.env]
        for j, e in enumerate(cell.env):
            if "=" not in e:
                out.add("error", "env", f"env entry {e!r} is not KEY=VALUE", ("cells", i, "env", j))
            elif keys_env[j] in keys_env[:j]:
                out.add("error", "env", f"{keys_env[j]} is set twice", ("cells", i, "env", j))
    for ref in page.lookup:
        key = tuple(ref.match.get(d) for d in page.dims)
        if key in seen:
            out.add("error", "cell-duplicate", f"same match as cells[{seen[key]}] ({', '.join(map(str, key))}): "
                    "the first cell wins, this one is never used", ("cells", ref.index, "match"))
        else:
            seen.setdefault(key, ref.index)
    for hw in ids["hw"]:
        if not any(c.match.get("hw") == hw for c in page.lookup):
            out.add("error", "hardware", f"hardware {hw!r} has no cell", ("supported_hardware",))
    for k, row in enumerate(page.match_dims):
        for j, opt in enumerate(row.options):
            if not any(c.match.get(row.id) == opt.id for c in page.lookup):
                out.add("warning", "cell-match", f"no cell uses {row.id}={opt.id}: the option is always greyed",
                        ("match_dims", k, "options", j))


def _registry(page: Page) -> FlagRegistry:
    from hybridplan.engine.api import for_version

    return for_version(page.engine_version).registry()


def _check_flag(reg: FlagRegistry, flag: str, kind: str, values: dict[str, Any]) -> str | None:
    """Why a flag string is not valid for the engine's parser (None if it is)."""
    from hybridplan.cookbook.text import interpolate
    from hybridplan.engine.registry import parse_argv

    fam = C.family(flag)
    if not fam.startswith("--"):
        return f"{flag!r} is not a --flag"
    if not reg.knows(fam):
        try:
            parsed = parse_argv(reg, ["--model-path", "m", fam] if kind == "strip" else
                                ["--model-path", "m"] + list(argv_of([interpolate(flag, values)])))
        except BadInput as exc:
            more = f" ({exc.message})" if "ambiguous" in exc.message else ""
            return f"{fam} is not a flag of sglang {reg.version}{more}"
        dest = next((d for d, sp in parsed.spelled.items() if sp == fam), None)
        if dest is not None:
            return f"{fam} is an abbreviation of {reg.option_for(dest)}; spell the flag out"
        return f"{fam} is not a flag of sglang {reg.version}"
    if kind == "strip" or PLACEHOLDER.search(interpolate(flag, values)):
        return None  # an undeclared placeholder is the placeholder rule's finding
    argv = list(argv_of([interpolate(flag, values)]))
    try:
        parse_argv(reg, argv if fam == "--model-path" else ["--model-path", "m"] + argv)
    except BadInput as exc:
        return f"{flag!r}: {exc.message}"
    return None


def _check_flags(page: Page, out: _Collector) -> set[str]:
    """Every flag (cells, overlay options, strips, all branches) exists in the pinned engine version and parses.
    Returns the flag strings that do not (set aside when the cells are sized)."""
    aside: set[str] = set()
    try:
        reg = _registry(page)
    except BadInput as exc:
        out.add("error", "engine", exc.message, ("engine_version",))
        return aside
    values = {k: p.default for k, p in page.placeholders.items()} | {"MODEL_NAME": "m", "NODE_RANK": "0",
                                                                     "NODE0_IP": "127.0.0.1"}
    for i, cell in enumerate(page.cells):
        for j, flag in enumerate(cell.flags):
            why = _check_flag(reg, flag, "flags", values)
            if why:
                aside.add(flag)
                out.add("error", "flag-unknown", why, ("cells", i, "flags", j))
    for loc, kind, s in _contribution_strings(page):
        if kind == "env":
            if "=" not in s:
                out.add("error", "env", f"env entry {s!r} is not KEY=VALUE", loc)
            continue
        why = _check_flag(reg, s, kind, values)
        if why:
            if kind == "flags":
                aside.add(s)
            out.add("error", "flag-unknown", why, loc)
    return aside


def _without(items: list[Any], aside: set[str]) -> list[Any]:
    """Items (strings and when/then/else branches, as data) with the set-aside flag strings left out."""
    out: list[Any] = []
    for it in items:
        if isinstance(it, str):
            if it not in aside:
                out.append(it)
        else:
            out.append({**it, "then": _without(it.get("then") or [], aside),
                        "else": _without(it.get("else") or [], aside)})
    return out


def set_aside(page: Page, aside: set[str], out: _Collector) -> Page:
    """The page with flags the engine does not know left out of every cell and option, so each cell is still
    sized (its pin findings still appear); each cell that lost one says so."""
    if not aside:
        return page
    data = page.model_dump(mode="json", by_alias=True, exclude_none=True)
    for i, cell in enumerate(data["cells"]):
        gone = [f for f in cell["flags"] if f in aside]
        if gone:
            cell["flags"] = [f for f in cell["flags"] if f not in aside]
            out.add("info", "flag-set-aside", f"sized with {', '.join(gone)} set aside (unknown to sglang "
                    f"{page.engine_version}); the findings on this cell's selections are for the rest of its flags",
                    ("cells", i, "flags"))
    for group in ("match_dims", "overlay_dims"):
        for i, dim in enumerate(data[group]):
            for j, opt in enumerate(dim["options"]):
                kept = _without(opt.get("flags") or [], aside)
                if kept != (opt.get("flags") or []):
                    opt["flags"] = kept
                    out.add("info", "flag-set-aside", f"{dim['id']}={opt['id']}: its selections are sized with "
                            f"{', '.join(sorted(aside))} set aside (unknown to sglang {page.engine_version})",
                            (group, i, "options", j, "flags"))
    return Page.model_validate(data)


def _check_placeholders(page: Page, out: _Collector) -> None:
    """Every {{KEY}} in a command, env, curl or example is declared (or filled by the renderer)."""
    declared = set(page.placeholders) | BUILTIN_KEYS
    places: list[tuple[tuple[Any, ...], str, set[Any]]] = []
    for i, cell in enumerate(page.cells):
        places += [(("cells", i, "flags", j), f, declared) for j, f in enumerate(cell.flags)]
        places += [(("cells", i, "env", j), e, declared) for j, e in enumerate(cell.env)]
    places += [(loc, s, declared) for loc, _, s in _contribution_strings(page)]
    if page.curl:
        places.append((("curl",), page.curl, declared))
    places += [(("examples", i, "command"), e.command, declared) for i, e in enumerate(page.examples)]
    if page.benchmark_commands.speed:
        places.append((("benchmark_commands", "speed"), page.benchmark_commands.speed, declared | BENCH_KEYS))
    for key, tmpl in page.benchmark_commands.accuracy.items():
        places.append((("benchmark_commands", "accuracy", key), tmpl, declared | BENCH_KEYS))
    for loc, text, ok in places:
        for key in PLACEHOLDER.findall(text):
            if key not in ok:
                out.add("error", "placeholder", f"{{{{{key}}}}} is not declared under placeholders", loc)


def _check_verification(page: Page, out: _Collector) -> None:
    """Verified or in-progress cells name the build their pins were measured on, and the page installs it."""
    commit = page.install.commit
    for i, cell in enumerate(page.cells):
        v = cell.verification
        claims = {v.status} | {r.status for r in v.rules}
        if claims & {"verified", "in-progress"} and not (v.build or v.image):
            out.add("error", "verification", "a verified or in-progress cell must name the build its pins were "
                    "measured on (verification.build, or the image)", ("cells", i, "verification"))
        if "verified" in claims and not v.measurements:
            out.add("warning", "verification", "verified without a measurement record", ("cells", i, "verification"))
        for k, m in enumerate(v.measurements):
            if not (m.build or v.build):
                out.add("error", "verification", "the measurement names no build",
                        ("cells", i, "verification", "measurements", k))
        if commit and v.build and "verified" in claims and not _same_build(commit, v.build):
            out.add("warning", "install", f"pins measured on {v.build} but the page installs {commit}: pins are "
                    "build-specific (the docs' #35753/#35786)", ("cells", i, "verification", "build"))


def _same_build(a: str, b: str) -> bool:
    """Whether two build references name the same commit (`v0.5.18 @ 71de97b2` and `71de97b2...` do)."""
    ha, hb = re.findall(r"\b[0-9a-f]{7,40}\b", a.lower()), re.findall(r"\b[0-9a-f]{7,40}\b", b.lower())
    if ha and hb:
        return any(x.startswith(y) or y.startswith(x) for x in ha for y in hb)
    return a.strip().lower() == b.strip().lower()


def _check_defaults(page: Page, out: _Collector) -> None:
    """The initial selection (flagship cell + overlay defaults) is visible and enabled as it stands."""
    _, moves = S.reseat(page, S.default_selection(page))
    for m in moves:
        loc = ("cells", 0, "match", m.dim) if not page.is_overlay(m.dim) else (
            "overlay_dims", [d.id for d in page.overlay_dims].index(m.dim), "default")
        out.add("error", "default", f"the default {m.dim}={m.from_} is not available on the initial selection "
                f"({m.reason}); it would open on {m.to}", loc)


# ---------------------------------------------------------------------------------------------- dynamic rules


def _dim_loc(page: Page, dim: str) -> tuple[Any, ...]:
    for group in ("match_dims", "overlay_dims"):
        ids = [d.id for d in getattr(page, group)]
        if dim in ids:
            return (group, ids.index(dim))
    return ("supported_hardware",)


def _check_selections(page: Page, out: _Collector, *, gpu: bool, engine: bool) -> None:
    """Render every reachable selection: a cell, a model, no duplicate families, the engine accepts the command,
    no row with every option disabled, every strip removes something; then the GPU checks. `engine=False` (the
    flags themselves are wrong) skips what would only repeat that."""
    reg = _registry(page)
    if gpu:
        from hybridplan.cookbook import fit
    strip_hits: dict[_StripKey, bool] = {}
    for sel_items, _, landed in landings(page):
        sel = dict(sel_items)
        for row in S.rows(page):
            if S.row_visible(row, sel):
                shown = [o for o in row.options if _shown(o, sel)]
                if shown and all(S.disabled_reason(page, row, o, sel) for o in shown):
                    out.add("error", "row-disabled", f"every option of {row.id} is disabled for this selection",
                            _dim_loc(page, row.id), sel)
        r = render_landed(page, *landed, panel=False)
        if r.cell is None:
            out.add("error", "no-cell", "this selection has no cell after reseating (No command available)",
                    ("cells",), sel)
            continue
        if r.redirect:
            continue
        cell_loc = ("cells", r.cell["index"])
        if not r.model_name:
            out.add("error", "model-name", "no model name for this selection", ("model_names",), sel)
        _strip_usage(page, sel, page.cells[r.cell["index"]].flags, strip_hits)
        fams = [C.family(f) for f in r.flags]
        dests = [_dest(reg, f) for f in fams]
        for j, fam in enumerate(fams):
            if fam in fams[:j]:
                out.add("error", "duplicate-flag", f"{fam} appears twice after composition", cell_loc, sel)
            elif dests[j] is not None and dests[j] in dests[:j]:
                out.add("error", "duplicate-flag", f"{fam} sets {dests[j]} a second time after composition",
                        cell_loc, sel)
        if C.RATIO in fams and C.EXPLICIT_SIZE in fams:
            out.add("error", "stale-ratio", "both --mamba-full-memory-ratio and --max-mamba-cache-size: the ratio "
                    "is ignored (the explicit size wins)", cell_loc, sel)
        if not engine:
            continue
        refusals = [w for w in r.warnings if w.startswith("the engine model")]
        for w in refusals:
            out.add("error", "engine", w, cell_loc, sel)
        base = r.ratio.get("base")
        if base and base.get("error") and not refusals:
            out.add("warning", "ratio", f"the calculator cannot price this command: {base['error']}", cell_loc, sel)
        if gpu:
            for severity, rule, msg in fit.check_rendered(page, r):
                out.add(severity, rule, msg, cell_loc, sel)
    for (group, i, opt_j, fam, own_row), hit in strip_hits.items():
        if not hit:
            loc = (group, i, "strip") if own_row else (group, i, "options", opt_j, "strip")
            dim = getattr(page, group)[i]
            who = f"row {dim.id}" if opt_j is None else f"{dim.id}={dim.options[opt_j].id}"
            out.add("warning", "strip-unused", f"{who} strips {fam}, which no cell it applies to carries and it "
                    "does not re-pin", loc)
    if gpu and engine:
        for severity, rule, msg, sel in fit.check_greyed(page):
            out.add(severity, rule, msg, ("no_cell",), sel)
        for severity, rule, msg in fit.check_records(page):
            out.add(severity, rule, msg, ("records",))


def _shown(option: Option, sel: dict[str, str]) -> bool:
    from hybridplan.cookbook.conditions import evaluate

    return evaluate(option.show_when, sel)


def _dest(reg: FlagRegistry, fam: str) -> str | None:
    flag = reg.by_option.get(fam)
    return flag.dest if flag is not None else None


def _strip_usage(page: Page, sel: dict[str, Any], cell_flags: list[str], hits: dict[_StripKey, bool]) -> None:
    """Record, per strip entry, whether it removed a cell flag (or the ratio slot) or re-pins its own family."""
    from hybridplan.cookbook.conditions import evaluate

    have = {C.family(f) for f in C.with_ratio_slot(cell_flags) if f != C.RATIO_SLOT}
    if C.RATIO_SLOT in C.with_ratio_slot(cell_flags):
        have.add(C.RATIO)
    for i, dim in enumerate(page.overlay_dims):
        if not evaluate(dim.show_when, sel):
            continue
        opt = dim.option(sel.get(dim.id, ""))
        if opt is None or opt.disabled_reason(sel) is not None:
            continue
        own = {C.family(f) for f in expand(opt.flags, sel)}
        for fam, own_row in [(f, True) for f in expand(dim.strip, sel)] + [(f, False) for f in expand(opt.strip, sel)]:
            j = None if own_row else dim.options.index(opt)
            key = ("overlay_dims", i, j, fam, own_row)
            hits[key] = hits.get(key, False) or fam in have or fam in own


# ---------------------------------------------------------------------------------------------- entry points


def validate(page: Page, src: "SourceMap | ModuleLines", *, gpu: bool = True) -> list[Finding]:
    """All findings for a page that passed the schema."""
    out = _Collector(src, page)
    _check_conditions(page, out)
    _check_cells(page, out)
    aside = _check_flags(page, out)
    _check_placeholders(page, out)
    _check_verification(page, out)
    _check_defaults(page, out)
    if not any(f.severity == "error" and f.rule in ("cell-match", "condition") for f in out.out):
        # an unknown flag is an error on its cell, and every cell is still sized without it
        _check_selections(set_aside(page, aside, out), out, gpu=gpu,
                          engine=not any(f.rule == "placeholder" and f.severity != "info" for f in out.out))
    return out.out


def _findings(loaded: LoadedPage, *, gpu: bool, version: str | None = None) -> list[Finding]:
    if loaded.page is None:
        return [Finding(severity="error", rule="schema", message=f"{dotted(e.loc) or 'page'}: {e.message}",
                        origin=loaded.source.origin, line=e.line) for e in loaded.errors]
    return validate(at_version(loaded.page, version), loaded.source, gpu=gpu)


def check_text(text: str, origin: str, *, gpu: bool = True) -> list[Finding]:
    """Findings for one page's YAML text (Unreadable propagates)."""
    return _findings(read_page_text(text, origin), gpu=gpu)


def check_docs_module(path: Path, *, gpu: bool = True, version: str | None = None) -> list[Finding]:
    """A docs config module: the docs' structural rules, what the import cannot express, then every check of the
    imported page (the engine model included). Findings carry the module's path; BadInput when it does not load."""
    from hybridplan.cookbook.docs.importer import import_evaluation
    from hybridplan.cookbook.docs.keep import ModuleLines
    from hybridplan.cookbook.docs.literal import scan
    from hybridplan.cookbook.docs.node_eval import evaluate_file
    from hybridplan.cookbook.docs.rules import docs_rules

    ev = evaluate_file(path)
    origin = str(path)
    lines = ModuleLines(origin, scan(ev.source, ev.data))
    top = lines.line(())
    out = [Finding(severity="error", rule="docs-structure", message=m, origin=origin, line=top)
           for m in docs_rules(ev)]
    imp = import_evaluation(ev)
    out += [Finding(severity="warning", rule="docs-import", message=m, origin=origin, line=top)
            for m in imp.findings]
    if imp.page is not None:
        out += validate(at_version(imp.page, version), lines, gpu=gpu)
    return out


def _files(paths: list[str]) -> list[Path]:
    if not paths:
        return [Path(str(bundled_path(pid))) for pid in bundled_ids()]
    out: list[Path] = []
    bundled = bundled_ids()
    for ref in paths:
        p = Path(str(bundled_path(ref))) if ref in bundled and not Path(ref).exists() else Path(ref)
        if p.is_dir():
            out += sorted(f for f in [*p.glob("*.y*ml"), *p.glob("*.jsx")] if not f.name.startswith("_"))
        else:
            out.append(p)
    return out


def docs_modules(root: str) -> list[str]:
    """Every config module of a docs tree (`DIR/src/snippets/configs/**/*.jsx`; DIR may also be the repository
    holding `docs/`): the shared `_*.jsx` engine files and the `*-benchmarks.jsx` measurement tables are not
    config modules. BadInput when DIR has no configs folder."""
    for base in (Path(root), Path(root) / "docs"):
        configs = base / "src" / "snippets" / "configs"
        if configs.is_dir():
            return [str(p) for p in sorted(configs.rglob("*.jsx"))
                    if not p.name.startswith("_") and not p.name.endswith("-benchmarks.jsx")]
    raise BadInput(f"--docs {root}: no src/snippets/configs/ folder (give the docs tree, e.g. sglang/docs)")


def check_paths(paths: list[str], *, gpu: bool = True, version: str | None = None) -> Report:
    """Validate pages: files, folders or bundled page ids (none: every bundled page), each modelled by its own
    release or by `version`."""
    if version is not None:
        from hybridplan.engine.api import check_version

        check_version(version)  # a bad --engine-version is a usage error, not a finding per page
    report = Report()
    for path in _files(paths):
        report.files.append(str(path))
        try:
            if path.suffix == ".jsx":
                report.findings += check_docs_module(path, gpu=gpu, version=version)
                continue
            loaded = read_page_file(path)
        except (Unreadable, BadInput) as exc:
            report.unreadable.append(exc.message)
            report.findings.append(Finding(severity="error", rule="unreadable", message=exc.message,
                                           origin=str(path)))
            continue
        report.findings += _findings(loaded, gpu=gpu, version=version)
    return report
