"""`hybridplan explain`: what the engine will allocate for a launch command, and why."""

from __future__ import annotations

from typing import List, Optional

import typer

from hybridplan.commands.app import COMMAND_HELP, app, command_tokens, emit_json, run_guarded
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
    engine: str = typer.Option("sglang", "--engine", help="The engine the command launches: sglang or vllm."),
    kv_memory_gib: Optional[float] = typer.Option(None, "--kv-memory-gib", callback=opt.FREE_GIB_CHECK,
                                                  help="vLLM: the boot log's 'Available KV cache memory', GiB."),
) -> None:
    """What the engine will allocate for a launch command, and why."""

    def body() -> int:
        if engine != "sglang":
            return _explain_other(engine, command, engine_version, kv_memory_gib, gpu, as_json)
        from hybridplan.explain import explain as run

        card = None
        if gpu is not None or gpu_memory_gib is not None:  # the GPU catalog (pydantic) only when a card is named
            from hybridplan.hardware.catalog import from_options

            card = from_options(gpu, gpu_memory_gib)
        from hybridplan.evidence_sources import all_evidence

        result = run(command_tokens(command), budget=pool_budget_gib, version=engine_version, gpu=card,
                     available_gib=available_gib, pre_load_gib=pre_load_gib, weights_gib=weights_gib, hub=hub,
                     evidence=all_evidence)
        if as_json:
            emit_json(result)
        else:
            from hybridplan.render.explain import print_explain
            from hybridplan.render.timeline import print_timeline

            print_explain(result)
            if result.get("memory"):
                print_timeline(result["memory"]["timeline"])
        return 3 if "error" in result else 0

    run_guarded(body, as_json)


def _explain_other(engine: str, command: Optional[List[str]], version: Optional[str], kv_memory_gib: Optional[float],
                   gpu: Optional[str], as_json: bool) -> int:
    """`explain --engine vllm`: the plan from the logged available KV memory (--gpu: the card; default sm90)."""
    import shlex

    from hybridplan.errors import BadInput

    if engine != "vllm":
        raise BadInput(f"--engine: {engine!r} is not modelled (sglang, vllm)")
    if not command:
        raise BadInput("no launch command given; put it after `--`, e.g. "
                       "`hybridplan explain --engine vllm --kv-memory-gib 40 -- vllm serve Qwen/Qwen3.5-27B`")
    from hybridplan.vllm_explain import explain_vllm

    text = command[0] if len(command) == 1 else shlex.join(command)
    result = explain_vllm(text, version=version, kv_memory_gib=kv_memory_gib, gpu=gpu)
    if as_json:
        emit_json(result)
    else:
        from hybridplan.render.vllm import print_vllm_explain

        print_vllm_explain(result)
    return 0
