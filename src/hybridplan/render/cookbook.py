"""`cookbook list|render|matrix|check|import` as text; the same dicts are the --json output."""

from __future__ import annotations

import sys
from typing import Any, TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from hybridplan.cookbook.docs.importer import Imported
    from hybridplan.cookbook.render import Rendered
    from hybridplan.cookbook.validate import Finding, Report

BADGE_STYLE = {"verified": "green", "in-progress": "blue", "unverified": "yellow"}


def _console(console: Console | None) -> Console:
    return console or Console(soft_wrap=True)


def print_list(rows: list[dict[str, Any]], console: Console | None = None) -> None:
    c = _console(console)
    t = Table(show_header=True, header_style="bold")
    for col in ("page", "model", "hardware", "dimensions", "cells", "verified"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["id"], r["model"], " ".join(r["hardware"]), " ".join(["hw"] + r["match_dims"] + r["overlay_dims"]),
                  str(r["cells"]), str(r["verified_cells"]))
    c.print(t)


def print_rendered(r: Rendered, console: Console | None = None) -> None:
    """The command, then the badge, the selection (with reseats), warnings, notes and greyed options."""
    from hybridplan.cookbook.render import BADGE_LABELS

    c = _console(console)
    sel = " ".join(f"{k}={v}" for k, v in r.selection.items())
    c.print(f"[bold]{r.page}[/] {sel}", highlight=False)
    for m in r.reseated:
        c.print(f"[yellow]reseated[/] {m.dim}: {m.from_} -> {m.to} ({m.reason})", highlight=False)
    c.print(f"[{BADGE_STYLE[r.badge]} bold]{BADGE_LABELS[r.badge]}[/]"
            + (f"  build {r.verification['build']}" if r.verification and r.verification.get("build") else ""))
    ev = r.badge_evidence
    if ev and not ev["backs_badge"]:
        c.print(f"[yellow]badge not backed:[/] {ev['says']}", highlight=False)
    elif ev and ev["level"]:
        c.print(f"evidence: {ev['level']} - {ev['note']}", highlight=False)
    c.print()
    c.print(r.command, markup=False, highlight=False)
    c.print()
    if r.effective:
        c.print("[bold]With the playground changes[/] (--add-flag / --add-env):")
        c.print(r.effective["command"], markup=False, highlight=False)
        c.print()
    base = r.ratio.get("base")
    if base and base.get("text") is not None:
        origin = {"calculator": "pinned", "overlay": "the recipe pins its own ratio",
                  "cell": "the recipe sizes the state pool itself"}.get(r.ratio.get("pinned") or "", "")
        c.print(f"ratio: {base['text']} (S={base['slots_per_request']}, D={base['draft_states_per_request']}; "
                f"or --max-mamba-cache-size {base['max_mamba_cache_size_pin']}) {origin}", highlight=False)
    elif base and base.get("error"):
        c.print(f"[yellow]ratio:[/] not computed: {base['error']}", highlight=False)
    for w in r.warnings:
        c.print(f"[yellow]warning:[/] {w}", highlight=False)
    for n in r.notes:
        c.print(f"note: {n}", highlight=False)
    for bw in r.build_warnings:
        needs = f" (needs {bw['requires']})" if bw.get("requires") else ""
        without = f"; without it the boot fails with \"{bw['symptom']}\"" if bw.get("symptom") else ""
        c.print(f"[yellow]build:[/] {bw['text']}{needs}{without}", highlight=False)
    for dim, opts in r.options.items():
        for o in opts:
            if o.disabled:
                c.print(f"[dim]greyed {dim}={o.id}: {o.reason}[/]", highlight=False)
    _print_calculator(c, r.calculator)
    _print_install(c, r.install, r.mode)
    _print_measured(c, r.verification)
    _print_commands(c, "Examples", [(e["title"], e["command"]) for e in r.examples]
                    + ([("Hello", r.curl)] if r.curl and not r.examples else []))
    _print_commands(c, "Benchmarks", [(f"speed, concurrency {b['concurrency']}", b["command"]) for b in r.benchmarks]
                    + [(f"accuracy, {a['eval']}", a["command"]) for a in r.accuracy])


MEASURED = (("max_total_num_tokens", "KV pool tokens"), ("max_mamba_cache_size", "K"),
            ("max_running_requests", "max running requests"), ("ttft_ms", "TTFT ms"), ("tpot_ms", "TPOT ms"),
            ("tokens_per_sec_per_gpu", "tok/s/GPU"), ("accept_length", "accept length"))


def _print_measured(c: Console, verification: dict[str, Any] | None) -> None:
    """The measurements behind the badge: build, workload and whatever numbers the source gives."""
    rows = (verification or {}).get("measurements") or []
    if rows:
        c.print("[bold]Measured[/]")
    for m in rows:
        w = m.get("workload") or {}
        load = (f"ISL {w['isl']} / OSL {w['osl']}, concurrency {', '.join(map(str, w['concurrency']))}"
                if w else "no workload given")
        nums = ", ".join(f"{label} {_num(m[k])}" for k, label in MEASURED if k in m)
        c.print(f"  {m.get('outcome', 'serves')} on {m.get('build', '?')}: {load}"
                + (f"; {nums}" if nums else "") + (f" ({m['source']})" if m.get("source") else ""), highlight=False)


def _num(v: float) -> str:
    """A measured number as published: integers with separators, others as given (604.0 -> 604)."""
    return f"{int(v):,}" if float(v).is_integer() else str(v)


def _print_install(c: Console, ins: dict[str, Any] | None, mode: str) -> None:
    """pip at the pinned commit, or the docker image (with the commit it carries) or the image built at it."""
    if not ins or not (ins["pip"] or ins["docker"]["image"]):
        return
    c.print("[bold]Install[/]" + (f" (commit {ins['commit']})" if ins["commit"] else ""), highlight=False)
    d = ins["docker"]
    if mode == "docker":
        carries = f" (carries {d['commit']})" if d["commit"] else " (no recorded commit)"
        c.print(f"  image {d['image']}{carries}", highlight=False)
        if d["build"]:
            c.print("  or build the pinned commit:", highlight=False)
        steps = d["build"]
    else:
        steps = ins["pip"]
    for step in steps:
        c.print(f"  {step}", markup=False, highlight=False)
    if ins.get("note"):
        c.print(f"  {ins['note']}", markup=False, highlight=False)


def _print_commands(c: Console, title: str, items: list[tuple[str, str]]) -> None:
    if items:
        c.print(f"[bold]{title}[/]")
    for label, cmd in items:
        c.print(f"  # {label}", markup=False, highlight=False)
        c.print(f"  {cmd}", markup=False, highlight=False)


def _print_calculator(c: Console, calc: dict[str, Any] | None) -> None:
    """Base and effective commands side by side, each read with its own env (cookbook-semantics §7.5)."""
    if not calc or calc.get("effective") is None:
        return
    c.print(f"[bold]Calculator[/] (L {calc['request_length']}, C {calc['concurrency']})")
    t = Table(show_header=True, header_style="bold")
    for col in ("", "base", "effective"):
        t.add_column(col)
    b, e = calc["base"], calc["effective"]
    rb, re_ = b["ratio"], e["ratio"]
    t.add_row("env", " ".join(b["env"]) or "-", " ".join(e["env"]) or "-")
    for key, label in (("mamba_full_memory_ratio_text", "ratio"), ("max_mamba_cache_size_pin", "K pin"),
                       ("slots_per_request", "S"), ("draft_states_per_request", "D"), ("error", "error")):
        if key in rb or key in re_:
            t.add_row(label, str(rb.get(key, "-")), str(re_.get(key, "-")))
    c.print(t)


def print_matrix(m: dict[str, Any], console: Console | None = None) -> None:
    """One row per reachable selection, then each distinct greyed reason once."""
    c = _console(console)
    t = Table(show_header=True, header_style="bold")
    for d in m["dims"]:
        t.add_column(d)
    for col in ("badge", "cell", "ratio", "warnings"):
        t.add_column(col)
    reasons: dict[tuple[Any, ...], int] = {}
    for row in m["selections"]:
        base = (row["ratio"] or {}).get("base") or {}
        ratio = next((f.split()[1] for f in row["flags"] if f.startswith("--mamba-full-memory-ratio ")), "-")
        if base.get("error"):
            ratio = "error"
        cell = "-" if row["cell"] is None else str(row["cell"]["index"])
        t.add_row(*[row["selection"].get(d, "") for d in m["dims"]],
                  f"[{BADGE_STYLE[row['badge']]}]{row['badge']}[/]", cell, ratio, str(len(row["warnings"])))
        for dim, opts in row["greyed"].items():
            for o in opts:
                key = (dim, o["id"], o["reason"])
                reasons[key] = reasons.get(key, 0) + 1
    c.print(t)
    c.print(f"{len(m['selections'])} selections from {m['combinations']} combinations; " +
            ", ".join(f"{k} {v}" for k, v in m["badges"].items()))
    if reasons:
        c.print("[bold]Greyed options[/] (reason, selections showing it):")
        for (dim, oid, reason), n in reasons.items():
            c.print(f"  {dim}={oid}: {reason} ({n})", highlight=False)


def _selection(f: Finding) -> str:
    return " (" + " ".join(f"{k}={v}" for k, v in f.selection.items()) + ")" if f.selection else ""


def print_report(report: Report, console: Console | None = None, per_page: bool = False) -> None:
    """`check` output: one line per finding (`file:line: severity [rule] message`), then (`per_page`, a docs tree)
    one line per page, then the totals."""
    from rich.markup import escape

    c = _console(console)
    style = {"error": "red", "warning": "yellow", "info": "cyan"}
    for f in report.findings:
        c.print(f"{escape(f.where)}: [{style[f.severity]}]{f.severity}[/] {escape(f'[{f.rule}]')} "
                f"{escape(f.message + _selection(f))}", highlight=False)
    if per_page:
        for p in report.per_file():
            verdict = ("unreadable" if p["unreadable"] else "FAIL" if p["error"] else "warn" if p["warning"]
                       else "ok")
            c.print(f"{verdict:10} {escape(p['file'])}: {p['error']} error, {p['warning']} warning, {p['info']} info",
                    highlight=False)
    c.print(report.summary())


def _annotation(text: str) -> str:
    """GitHub's workflow-command escaping of an annotation's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def print_github(report: Report, per_page: bool = False) -> None:
    """`check --format github`: one GitHub Actions annotation per finding (`::error file=…,line=…::…`; info as
    `notice`), then the page lines and totals as plain text."""
    kind = {"error": "error", "warning": "warning", "info": "notice"}
    for f in report.findings:
        where = f"file={_annotation(f.origin).replace(',', '%2C').replace(':', '%3A')}"
        if f.line:
            where += f",line={f.line}"
        print(f"::{kind[f.severity]} {where},title={f.rule}::{_annotation(f.message + _selection(f))}")
    if per_page:
        for p in report.per_file():
            print(f"{p['file']}: {p['error']} error, {p['warning']} warning, {p['info']} info")
    print(report.summary())


def print_import(imp: Imported, yaml_to_stdout: bool) -> None:
    """`cookbook import`: the page YAML on stdout (unless written to a file), findings, notes and the verdict on
    stderr."""
    if yaml_to_stdout:
        sys.stdout.write(imp.yaml())
    for f in imp.findings:
        print(f"finding: {f}", file=sys.stderr)
    for n in imp.notes:
        print(f"note: {n}", file=sys.stderr)
    print(f"{'exact' if imp.exact else 'NOT exact'}: {imp.compared} selections with a cell compared "
          f"({len(imp.findings)} findings)", file=sys.stderr)
