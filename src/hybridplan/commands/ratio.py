"""`hybridplan ratio`: the balanced --mamba-full-memory-ratio and the --max-mamba-cache-size pin for a workload."""

from __future__ import annotations

from typing import List, Optional

import typer

from hybridplan.commands.app import COMMAND_HELP, app, emit_json, launch_words, run_guarded
from hybridplan.commands import options as opt


@app.command()
def ratio(
    command: Optional[List[str]] = typer.Argument(None, help=COMMAND_HELP),
    request_length: int = opt.REQUEST_LENGTH,
    concurrency: int = opt.CONCURRENCY,
    pool_budget_gib: Optional[float] = typer.Option(None, "--pool-budget-gib", callback=opt.POOL_BUDGET_CHECK,
                                                    help="The engine's total_rest_memory "
                                                    "(GiB): makes the ratio exact against the engine's sizing."),
    gpu: Optional[str] = opt.GPU,
    gpu_memory_gib: Optional[float] = opt.GPU_MEMORY_GIB,
    as_json: bool = opt.JSON,
    engine_version: Optional[str] = opt.ENGINE_VERSION,
    engine: str = opt.ENGINE,
) -> None:
    """The --mamba-full-memory-ratio that balances state and KV for L-token requests, and the pin for C of them."""

    def body() -> int:
        from hybridplan.engine.api import for_engine
        from hybridplan.engine.requests import RatioRequest

        result = for_engine(engine, engine_version).ratio(RatioRequest(
            command=launch_words(command), request_length=request_length, concurrency=concurrency,
            pool_budget_gib=pool_budget_gib, gpu=gpu, gpu_memory_gib=gpu_memory_gib, expand_home=True))
        if as_json:
            emit_json(result)
        else:
            from hybridplan.render.ratio import print_ratio

            print_ratio(result)
        return 0

    run_guarded(body, as_json)
