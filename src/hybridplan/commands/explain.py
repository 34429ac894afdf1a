"""`hybridplan explain`: what the engine will allocate for a launch command, and why."""

from __future__ import annotations

from typing import List, Optional

import typer

from hybridplan.commands.app import COMMAND_HELP, app, emit_text, flag_name, launch_words, run_guarded
from hybridplan.commands import options as opt


@app.command()
def explain(
    command: Optional[List[str]] = typer.Argument(None, help=COMMAND_HELP),
    pool_budget_gib: Optional[float] = typer.Option(None, "--pool-budget-gib", callback=opt.POOL_BUDGET_CHECK,
                                                    help="Memory the two pools share "
                                                    "(the engine's total_rest_memory, after weights and slack), GiB."),
    gpu: Optional[str] = opt.GPU,
    gpu_memory_gib: Optional[float] = opt.GPU_MEMORY_GIB,
    available_gib: Optional[float] = typer.Option(None, "--available-gib", callback=opt.FREE_GIB_CHECK,
                                                  help="Free GiB after the weights: the "
                                                  "'avail mem' of the last 'Load weight end' line of a boot log."),
    pre_load_gib: Optional[float] = typer.Option(None, "--pre-load-gib", callback=opt.FREE_GIB_CHECK,
                                                 help="Free GiB before the weights "
                                                 "(pre_model_load_memory): the first 'Load weight begin' avail mem."),
    weights_gib: Optional[float] = opt.WEIGHTS_GIB,
    hub: bool = opt.HUB,
    as_json: bool = opt.JSON,
    engine_version: Optional[str] = opt.ENGINE_VERSION,
    engine: str = opt.ENGINE,
    kv_memory_gib: Optional[float] = opt.KV_MEMORY_GIB,
) -> None:
    """What the engine will allocate for a launch command, and why."""

    def body() -> int:
        from hybridplan.api.calls import run_explain
        from hybridplan.engine.requests import ExplainRequest

        result = run_explain(ExplainRequest(command=launch_words(command), gpu=gpu, gpu_memory_gib=gpu_memory_gib,
                                            pool_budget_gib=pool_budget_gib, available_gib=available_gib,
                                            pre_load_gib=pre_load_gib, weights_gib=weights_gib,
                                            kv_memory_gib=kv_memory_gib, hub=hub, expand_home=True),
                             engine, engine_version, spell=flag_name)
        if as_json:
            emit_text(result.to_json())
        else:
            from hybridplan.engine.api import for_engine
            from hybridplan.render.explain import show_explain

            show_explain(result.payload, for_engine(engine, engine_version).layout)
        return result.exit_code

    run_guarded(body, as_json)
