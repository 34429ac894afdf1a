"""`hybridplan plan`: the launch command that serves a workload on a GPU, or why none does."""

from __future__ import annotations

from typing import List, Optional

import typer

from hybridplan.commands.app import app, emit_json, run_guarded
from hybridplan.commands import options as opt
from hybridplan.limits import MAX_UTIL_PROPOSED

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
    kv_memory_gib: Optional[float] = typer.Option(None, "--kv-memory-gib", callback=opt.FREE_GIB_CHECK,
                                                  help="vLLM: the measured boot's 'Available KV cache memory', GiB."),
    max_util: float = typer.Option(MAX_UTIL_PROPOSED, "--max-util", help="vLLM: the highest --gpu-memory-utilization to propose."),
) -> None:
    """The fewest changes to a launch command (yours after `--`, or the catalog's for --model) that serve C requests
    of L tokens on a GPU: request cap, graph sizes, prefill chunk, SSM dtype, radix strategy, ratio or pin, and a
    --mem-fraction-static within the evidence. `--engine vllm`: from one measured boot (--kv-memory-gib at the
    launch's --gpu-memory-utilization) on --gpu, or from the card alone without it, the utilization, prefix caching
    (the state's align/none mode) and KV dtype that serve C requests of L tokens."""

    def body() -> int:
        if engine == "vllm":
            return _plan_vllm(extra, gpu, kv_memory_gib, request_length, concurrency, max_util, engine_version,
                              as_json)
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


def _plan_vllm(extra: Optional[List[str]], gpu: Optional[str], kv_memory_gib: Optional[float], request_length: int,
               concurrency: int, max_util: float, version: Optional[str], as_json: bool) -> int:
    """`plan --engine vllm`: exit 1 when no candidate serves the target."""
    import shlex

    from hybridplan.errors import BadInput
    from hybridplan.planner.vllm_plan import VllmTarget, card, plan_vllm

    if not extra:
        raise BadInput("plan --engine vllm: give the launch after `--` (vllm serve MODEL ...)")
    text = extra[0] if len(extra) == 1 else shlex.join(extra)
    result = plan_vllm(VllmTarget(command=text, kv_memory_gib=kv_memory_gib, card=card(gpu),
                                  request_length=request_length, concurrency=concurrency, max_util=max_util), version,
                       gpu)
    if as_json:
        emit_json(result)
    else:
        from hybridplan.render.vllm import print_vllm_plan

        print_vllm_plan(result)
    return 0 if result["fits"] else 1
