"""`hybridplan check-engine`: compare hybridplan with the sglang an interpreter has installed, rule by rule."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from hybridplan.commands.app import app, emit_json, run_guarded
from hybridplan.commands import options as opt


@app.command("check-engine")
def check_engine(
    python: Optional[str] = typer.Option(None, "--python", help="Interpreter with sglang installed "
                                         "(default: this one). conformance/setup_oracle.sh builds one."),
    scenarios: int = typer.Option(500, "--scenarios", min=1, help="How many sampled launch scenarios."),
    seed: int = typer.Option(0, "--seed", help="Scenario sampling seed (the same seed gives the same scenarios)."),
    as_json: bool = opt.JSON,
) -> None:
    """Drive the installed engine's own sizing code and name every hybridplan rule that has drifted from it.

    Exit 0: every field equal; 1: drift; 2: no usable engine in that interpreter.
    """

    def body() -> int:
        from hybridplan.conformance.runner import NoEngine, check
        from hybridplan.errors import BadInput

        try:
            report = check(python or sys.executable, n=scenarios, seed=seed)
        except NoEngine as exc:
            raise BadInput(str(exc)) from None
        if as_json:
            emit_json(report.as_dict())
        else:
            _print(report)
        return 1 if report.drifts else 0

    run_guarded(body, as_json)


def _print(report) -> None:
    from rich.console import Console

    out = Console()
    eng = report.engine
    out.print(f"sglang {eng.get('version')} (python {eng.get('python')}, stand-in sm90 GPUs by scenario): "
              f"{len(report.scenarios)} scenarios, {report.drifted_scenarios} with drift")
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
