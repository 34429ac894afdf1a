"""`hybridplan compare`: one model on SGLang and on vLLM from the same cache memory, side by side."""

from __future__ import annotations

from typing import Optional

import typer

from hybridplan.commands import options as opt
from hybridplan.commands.app import app, emit_json, run_guarded


@app.command()
def compare(
    model: str = typer.Option(..., "--model", help="Model id or path (the catalog resolves offline)."),
    memory_gib: Optional[float] = typer.Option(None, "--memory-gib", callback=opt.FREE_GIB_CHECK,
                                               help="Cache memory per rank, GiB: SGLang's pool budget and vLLM's "
                                               "available KV memory. Without it, --gpu sizes each engine from the "
                                               "card's memory timeline."),
    request_length: int = opt.REQUEST_LENGTH,
    tp: int = opt.TP,
    kv_cache_dtype: str = typer.Option("auto", "--kv-cache-dtype", help="auto or fp8 (each engine's spelling)."),
    gpu: Optional[str] = opt.GPU,
    vllm_version: Optional[str] = typer.Option(None, "--vllm-version",
                                               help="The vLLM release to model (default: 0.33.0)."),
    as_json: bool = opt.JSON,
) -> None:
    """What SGLang and vLLM serve at L tokens (KV tokens, state slots or pages, concurrent requests) and why they
    differ: from the same cache memory (--memory-gib), or from what each leaves on one card (--gpu alone); each engine
    at its own defaults."""

    def body() -> int:
        from hybridplan.engines_compare import compare_engines

        result = compare_engines(model, memory_gib=memory_gib, request_length=request_length, tp=tp,
                                 kv_cache_dtype=kv_cache_dtype, gpu=gpu, vllm_version=vllm_version)
        if as_json:
            emit_json(result)
        else:
            from hybridplan.render.vllm import print_compare

            print_compare(result)
        return 0

    run_guarded(body, as_json)
