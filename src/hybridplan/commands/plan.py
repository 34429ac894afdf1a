"""`hybridplan plan`: the launch command that serves a workload on a GPU, or why none does."""

from __future__ import annotations

from typing import List, Optional

import typer

from hybridplan.commands.app import app, emit_json, run_guarded
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
    quant: Optional[str] = typer.Option(None, "--quant", help="bf16, fp8, nvfp4 or nvfp4-bf16-head: picks the checkpoint."),
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
) -> None:
    """The fewest changes to a launch command (yours after `--`, or the catalog's for --model) that serve C requests
    of L tokens on a GPU: request cap, graph sizes, prefill chunk, SSM dtype, radix strategy, ratio or pin, and a
    --mem-fraction-static within the evidence."""

    def body() -> int:
        from hybridplan.cookbook.record_checks import measured_failure
        from hybridplan.evidence_sources import all_evidence
        from hybridplan.planner.plan import plan as run, target_from_options

        target = target_from_options(model=model, gpu=gpu, gpu_memory_gib=gpu_memory_gib,
                                     request_length=request_length, concurrency=concurrency, quant=quant, spec=spec,
                                     draft=draft, tp=tp, extra=extra, max_mem_fraction=max_mem_fraction,
                                     pin=pin, weights_gib=weights_gib, hub=hub, version=engine_version,
                                     measured=measured_failure, evidence=all_evidence)
        result = run(target)
        result["warnings"].extend(
            DEPRECATED.format(flag=flag) for flag, on in (("--tune-mrr", tune_mrr),
                                                          ("--tune-chunked-prefill", tune_chunked_prefill)) if on)
        if as_json:
            emit_json(result)
        else:
            from hybridplan.render.plan import print_plan

            print_plan(result)
        return 0 if result["fits"] else 1

    run_guarded(body, as_json)
