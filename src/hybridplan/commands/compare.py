"""`hybridplan compare`: one model on every modelled engine from the same cache memory or card, side by side."""

from __future__ import annotations

from typing import List, Optional

import typer

from hybridplan.commands import options as opt
from hybridplan.commands.app import app, emit_text, launch_words, run_guarded


@app.command()
def compare(
    command: Optional[List[str]] = typer.Argument(None, help="A launch of --engine (instead of --model, --tp and "
                                                  "--kv-cache-dtype): that launch on its engine, its settings "
                                                  "carried to the others."),
    model: Optional[str] = typer.Option(None, "--model", help="Model id or path (the catalog resolves offline)."),
    memory_gib: Optional[float] = typer.Option(None, "--memory-gib", callback=opt.from_bound("memory_gib"),
                                               help="Cache memory per rank, GiB: SGLang's pool budget and vLLM's "
                                               "available KV memory. Without it, --gpu sizes each engine from the "
                                               "card's memory timeline."),
    request_length: int = opt.REQUEST_LENGTH,
    tp: int = opt.TP,
    kv_cache_dtype: str = typer.Option("auto", "--kv-cache-dtype", help="auto or fp8 (each engine's spelling)."),
    gpu: Optional[str] = opt.GPU,
    gpu_memory_gib: Optional[float] = opt.GPU_MEMORY_GIB,
    engine: str = typer.Option("sglang", "--engine", help="The engine the launch after `--` is for."),
    sglang_version: Optional[str] = typer.Option(None, "--sglang-version",
                                                 help="The SGLang release to model (default: the newest modelled)."),
    vllm_version: Optional[str] = typer.Option(None, "--vllm-version",
                                               help="The vLLM release to model (default: 0.33.0)."),
    as_json: bool = opt.JSON,
) -> None:
    """What SGLang and vLLM serve at L tokens (KV tokens, state slots or pages, concurrent requests) and why they
    differ: from the same cache memory (--memory-gib), or from what each leaves on one card (--gpu alone); each engine
    at its own defaults, or from your whole launch (`-- <launch>`, of --engine) carried to the other as far as it has
    the same settings. An engine that would not start says why, with the cheapest change that would."""

    def body() -> int:
        from hybridplan.api.calls import run_compare
        from hybridplan.engine.requests import CompareRequest

        versions = {"sglang": sglang_version, "vllm": vllm_version}  # the --<engine>-version options, by engine
        launch = launch_words(command) or None
        result = run_compare(CompareRequest(model=model, request_length=request_length, memory_gib=memory_gib, tp=tp,
                                            kv_cache_dtype=kv_cache_dtype, gpu=gpu, gpu_memory_gib=gpu_memory_gib,
                                            command=launch, launch_engine=engine if launch else None), versions)
        if as_json:
            emit_text(result.to_json())
        else:
            from hybridplan.engine.api import for_engine
            from hybridplan.render.compare import print_compare

            print_compare(result.payload, {name: for_engine(name).layout for name in result.engines})
        return result.exit_code

    run_guarded(body, as_json)
