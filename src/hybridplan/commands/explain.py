"""`hybridplan explain`: what the engine will allocate for a launch command, and why."""

from __future__ import annotations

import math
from typing import List, Optional

import typer

from hybridplan.cli import COMMAND_HELP, app, command_tokens, emit_json, run_guarded


@app.command()
def explain(
    command: Optional[List[str]] = typer.Argument(None, help=COMMAND_HELP),
    pool_budget_gib: Optional[float] = typer.Option(None, "--pool-budget-gib", help="Memory the two pools share "
                                                    "(the engine's total_rest_memory, after weights and slack), GiB."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    engine_version: Optional[str] = typer.Option(None, "--engine-version", help="Engine version to model."),
) -> None:
    """What the engine will allocate for a launch command, and why."""

    def body() -> int:
        from hybridplan.errors import BadInput
        from hybridplan.explain import explain as run

        if pool_budget_gib is not None and not math.isfinite(pool_budget_gib):
            raise BadInput("--pool-budget-gib must be a finite number")
        result = run(command_tokens(command), budget=pool_budget_gib, version=engine_version)
        if as_json:
            emit_json(result)
        else:
            from hybridplan.render import print_explain

            print_explain(result)
        return 3 if "error" in result else 0

    run_guarded(body, as_json)
