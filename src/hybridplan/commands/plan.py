"""`hybridplan plan`: the launch command that serves a workload on a GPU, or why none does."""

from __future__ import annotations

from typing import List, Optional

import typer

from hybridplan.commands.app import app, emit_text, flag_name, launch_words, run_guarded
from hybridplan.commands import options as opt

DEPRECATED = "{flag} is deprecated and does nothing: the request cap, prefill chunk, CUDA-graph batch size, SSM " \
             "dtype and radix strategy are always searched"


@app.command()
def plan(
    extra: Optional[List[str]] = typer.Argument(None, help="After `--`: your launch command (with --model-path; every "
                                                "flag and env assignment is kept unless it must change), or extra env "
                                                "and flags for the --model command (e.g. -- --kv-cache-dtype fp8_e4m3)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model id or path (the catalog resolves offline); not "
                                        "with a launch command."),
    gpu: Optional[str] = opt.GPU,
    gpu_memory_gib: Optional[float] = opt.GPU_MEMORY_GIB,
    request_length: int = opt.REQUEST_LENGTH,
    concurrency: int = opt.CONCURRENCY,
    quant: Optional[str] = typer.Option(None, "--quant", help="bf16, fp8, nvfp4 or nvfp4-bf16-head picks the checkpoint; auto-round, gptq, awq or compressed-tensors a community INT4 export."),
    spec: Optional[str] = typer.Option(None, "--spec", help="none, mtp (eagle/nextn), dspark, dflash, ngram."),
    draft: Optional[str] = typer.Option(None, "--draft", help="Draft checkpoint for dspark/dflash/eagle3."),
    tp: int = opt.TP,
    tune_mrr: bool = typer.Option(False, "--tune-mrr", hidden=True, help="Deprecated: always searched."),
    tune_chunked_prefill: bool = typer.Option(False, "--tune-chunked-prefill", hidden=True,
                                              help="Deprecated: always searched."),
    max_mem_fraction: Optional[float] = opt.MAX_MEM_FRACTION,
    pin: bool = typer.Option(False, "--pin", help="Size the state pool with --max-mamba-cache-size, not a ratio."),
    weights_gib: Optional[float] = opt.WEIGHTS_GIB,
    hub: bool = opt.HUB,
    as_json: bool = opt.JSON,
    engine_version: Optional[str] = opt.ENGINE_VERSION,
    engine: str = typer.Option("sglang", "--engine", help="The engine the launch is for: sglang or vllm."),
    kv_memory_gib: Optional[float] = typer.Option(None, "--kv-memory-gib", callback=opt.from_bound("kv_memory_gib"),
                                                  help="vLLM: the measured boot's 'Available KV cache memory', GiB."),
    max_util: Optional[float] = typer.Option(None, "--max-util", callback=opt.from_bound("max_util"), help="vLLM: the highest --gpu-memory-utilization to "
                                             "propose (default 0.95)."),
) -> None:
    """The fewest changes to a launch command (yours after `--`, or the catalog's for --model) that serve C requests
    of L tokens on a GPU: request cap, graph sizes, prefill chunk, SSM dtype, radix strategy, ratio or pin, and a
    --mem-fraction-static within the evidence. `--engine vllm`: from one measured boot (--kv-memory-gib at the
    launch's --gpu-memory-utilization) on --gpu, or from the card alone without it, the utilization, prefix caching
    (the state's align/none mode) and KV dtype that serve C requests of L tokens."""

    def body() -> int:
        from hybridplan.api.calls import run_plan
        from hybridplan.engine.requests import PlanRequest

        result = run_plan(PlanRequest(request_length=request_length, concurrency=concurrency,
                                      command=launch_words(extra) or None, model=model, gpu=gpu,
                                      gpu_memory_gib=gpu_memory_gib, quant=quant, spec=spec, draft=draft, tp=tp,
                                      max_mem_fraction=max_mem_fraction, pin=pin, weights_gib=weights_gib, hub=hub,
                                      kv_memory_gib=kv_memory_gib, max_util=max_util),
                          engine, engine_version, spell=flag_name, extra_apart=False)
        result.payload["warnings"].extend(
            DEPRECATED.format(flag=flag) for flag, on in (("--tune-mrr", tune_mrr),
                                                          ("--tune-chunked-prefill", tune_chunked_prefill)) if on)
        if as_json:
            emit_text(result.to_json())
        else:
            from hybridplan.engine.api import for_engine
            from hybridplan.render.plan import show_plan

            show_plan(result.payload, for_engine(engine, engine_version).layout)
        return result.exit_code

    run_guarded(body, as_json)
