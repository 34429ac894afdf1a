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
    """Drive the installed engine's own sizing code, name the modelled sglang release it matches (its reported one,
    else the closest, with the first drifted rule) and every hybridplan rule that has drifted from it.

    Exit 0: every field equal; 1: drift; 2: no usable engine in that interpreter.
    """

    def body() -> int:
        from hybridplan.conformance.runner import NoEngine
        from hybridplan.conformance.sglang.check import check
        from hybridplan.errors import BadInput

        try:
            report = check(python or sys.executable, n=scenarios, seed=seed)
        except NoEngine as exc:
            raise BadInput(str(exc)) from None
        if as_json:
            emit_json(report.as_dict())
        else:
            from hybridplan.render.check_engine import print_check_engine

            print_check_engine(report)
        return 1 if report.drifts else 0

    run_guarded(body, as_json)

