"""`hybridplan models`: the bundled catalog of model ids that resolve offline."""

from __future__ import annotations

from hybridplan.commands.app import app, emit_json, run_guarded
from hybridplan.commands import options as opt


@app.command("models")
def models(as_json: bool = opt.JSON) -> None:
    """List the bundled model catalog (ids that resolve offline)."""

    def body() -> int:
        from hybridplan.models.catalog import listing

        rows = listing()
        if as_json:
            emit_json({"models": rows})
        else:
            from hybridplan.render.models import print_models

            print_models(rows)
        return 0

    run_guarded(body, as_json)
