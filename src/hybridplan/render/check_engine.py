"""`check-engine` as text: scenarios compared with the installed engine, and each drifted rule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from hybridplan.conformance.sglang.check import EngineCheck


def print_check_engine(report: EngineCheck, console: Console | None = None) -> None:
    """The release matched (or the closest, with its first drifted rule), scenario counts, then every drifted rule
    with how many fields it moved and the first 20 drifts."""
    out = console or Console()
    eng = report.engine
    out.print(f"sglang {eng.get('version')} (python {eng.get('python')}, stand-in sm90 GPUs by scenario): "
              f"{len(report.cases)} scenarios, {report.drifted_scenarios} with drift")
    counts = ", ".join(f"{v} {n}" for v, n in report.match.drifts_by_version.items())
    out.print(report.match.summary + (f" (drifted fields by release: {counts})" if report.match.drifts else ""),
              markup=False)
    for name, counter in report.counts.items():
        out.print(f"  {name}: " + ", ".join(f"{k} {v}" for k, v in sorted(counter.items())))
    if not report.drifts:
        out.print("[green]every compared field equals the engine's[/green]")
        return
    out.print("[red]drifted rules:[/red]")
    for rule, count in report.drifted_rules.most_common():
        out.print(f"  {rule}: {count} field(s)")
    for d in report.drifts[:20]:
        out.print(f"  {d.scenario} {d.field}: engine {d.engine!r}, hybridplan {d.hybridplan!r}")
