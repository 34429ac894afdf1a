"""`hybridplan plan`: the launch command that serves a workload on a GPU, or why none does."""

from __future__ import annotations

from typing import List, Optional

import typer

from hybridplan.commands.app import app, emit_json, run_guarded
from hybridplan.commands import options as opt


def print_timeline(tl: dict) -> None:
    """The memory timeline: each step in GiB with where the number came from."""
    from rich.console import Console
    from rich.table import Table

    t = Table(title="Memory timeline (one GPU)", show_header=True, header_style="bold")
    t.add_column("step")
    t.add_column("GiB", justify="right")
    t.add_column("from")
    labels = (("capacity_gib", "card memory"), ("visible_gib", "visible to CUDA"), ("context_gib", "CUDA context"),
              ("pre_load_gib", "P  free before load"),
              ("target_weights_gib", "target weights"), ("draft_weights_gib", "draft weights"),
              ("available_gib", "A  free after weights"), ("mem_fraction_static", "--mem-fraction-static"),
              ("slack_gib", "slack P x (1 - mfs)"), ("pre_capture_reserve_gib", "pre-capture reserve"),
              ("mm_reservation_gib", "multimodal reservation"), ("rest_gib", "pool budget (total_rest_memory)"),
              ("pools_gib", "pools as allocated"), ("headroom_gib", "CUDA graphs + activations"),
              ("slack_need_gib", "what the slack must hold"), ("margin_gib", "margin kept free"),
              ("engine_reserve_gib", "engine's default-fraction reserve"),
              ("max_safe_mem_fraction", "highest safe mem fraction"))
    for key, label in labels:
        v = tl.get(key)
        if v is not None:
            value = f"{v['value']:.3f}" if key in ("mem_fraction_static", "max_safe_mem_fraction") else f"{v['value']:.2f}"
            t.add_row(label, value, f"{v['source']}: {v.get('note', '')}")
    Console().print(t)


def print_plan(r: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    c = Console()
    tgt = r["target"]
    c.print(f"[bold]{tgt['model']}[/] ({tgt['quant'] or 'as given'}) on {tgt['gpu']['name']}: {tgt['concurrency']} "
            f"x {tgt['request_length']:,}-token requests, spec {tgt['spec'] or 'none'}")
    if not r["fits"]:
        c.print(f"[red bold]nothing fits:[/] {r['why']}", highlight=False)
        for ch in r["changes_that_fit"]:
            c.print(f"  would fit: {ch['change']}", highlight=False)
        if r["cheapest_change"]:
            c.print(f"[bold]cheapest change:[/] {r['cheapest_change']}", highlight=False)
        return
    c.print(r["command"], markup=False, highlight=False, soft_wrap=True)
    s = r["split"]
    how = (f"--mamba-full-memory-ratio {s['mamba_full_memory_ratio_text']} (balanced; or "
           f"--max-mamba-cache-size {s['max_mamba_cache_size_pin']})" if s["kind"] == "ratio"
           else f"--max-mamba-cache-size {s['max_mamba_cache_size_pin']} (pin)")
    c.print(f"state pool: {how}; changes: {', '.join(r['changes']) or 'none'}", highlight=False)
    b = r["breakdown"]
    t = Table(title="Memory breakdown (one GPU)", show_header=True, header_style="bold")
    t.add_column("part")
    t.add_column("GiB", justify="right")
    t.add_column("from")
    for key, label in (("driver_reserved_gib", "driver reserved"), ("context_gib", "CUDA context"),
                       ("weights_gib", "weights"), ("draft_weights_gib", "draft weights"),
                       ("state_pool_gib", "state pool"), ("spec_scratch_gib", "spec verify scratch"),
                       ("kv_pool_gib", "KV pool"), ("cuda_graphs_activations_gib", "CUDA graphs + activations"),
                       ("free_gib", "free")):
        t.add_row(label, f"{b[key]:.2f}", b["sources"][key])
    t.add_row("[bold]card[/]", f"{b['capacity_gib']:.2f}", "")
    c.print(t)
    c.print(f"K = {r['max_mamba_cache_size']:,} state slots, {r['max_total_num_tokens']:,} KV tokens, "
            f"max_running_requests {r['max_running_requests']} (binding: {r['binding_limit']}); serves "
            f"{r['served_concurrency']} requests; fits from --mem-fraction-static {r['min_mem_fraction_static']}",
            highlight=False)
    margin = r["timeline"]["margin_gib"]
    c.print(f"margin: {margin['value']:.2f} GiB kept free beyond the predicted graphs and activations "
            f"({margin['note']})", highlight=False)
    for w in r["warnings"]:
        c.print(f"[yellow]warning:[/] {w}", highlight=False)
    c.print("[bold]Boot-log lines to expect (rank 0):[/]")
    for line in r["log_lines"]:
        c.print(f"  {line}", markup=False, highlight=False)


@app.command()
def plan(
    extra: Optional[List[str]] = typer.Argument(None, help="Extra env assignments and flags for every candidate, "
                                                "after `--` (e.g. -- --kv-cache-dtype fp8_e4m3)."),
    model: str = typer.Option(..., "--model", help="Model id or path (the catalog resolves offline)."),
    gpu: Optional[str] = opt.GPU,
    gpu_memory_gib: Optional[float] = opt.GPU_MEMORY_GIB,
    request_length: int = opt.REQUEST_LENGTH,
    concurrency: int = opt.CONCURRENCY,
    quant: Optional[str] = typer.Option(None, "--quant", help="bf16, fp8, nvfp4 or nvfp4-bf16-head: picks the checkpoint."),
    spec: Optional[str] = typer.Option(None, "--spec", help="none, mtp (eagle/nextn), dspark, dflash, ngram."),
    draft: Optional[str] = typer.Option(None, "--draft", help="Draft checkpoint for dspark/dflash/eagle3."),
    tp: int = opt.TP,
    tune_mrr: bool = typer.Option(False, "--tune-mrr", help="Also try --max-running-requests C."),
    tune_chunked_prefill: bool = typer.Option(False, "--tune-chunked-prefill", help="Also try smaller prefill chunks."),
    max_mem_fraction: Optional[float] = opt.MAX_MEM_FRACTION,
    pin: bool = typer.Option(False, "--pin", help="Size the state pool with --max-mamba-cache-size, not a ratio."),
    weights_gib: Optional[float] = opt.WEIGHTS_GIB,
    hub: bool = opt.HUB,
    as_json: bool = opt.JSON,
    engine_version: Optional[str] = opt.ENGINE_VERSION,
) -> None:
    """Search mem fraction, ratio or pin, SSM dtype and radix strategy for a target; print the best command."""

    def body() -> int:
        from hybridplan.engine.command import parse_command
        from hybridplan.errors import BadInput
        from hybridplan.hardware.catalog import from_options
        from hybridplan.planner.plan import Target, plan as run

        card = from_options(gpu, gpu_memory_gib)
        if card is None:
            raise BadInput("plan needs a GPU: --gpu (see the catalog ids) or --gpu-memory-gib")
        parsed = parse_command(list(extra)) if extra else None
        target = Target(model=model, gpu=card, request_length=request_length, concurrency=concurrency, quant=quant,
                        spec=spec, draft=draft, tp=tp, extra_flags=parsed.argv if parsed else (),
                        env=parsed.env if parsed else (), tune_mrr=tune_mrr, tune_chunked_prefill=tune_chunked_prefill,
                        max_mem_fraction=max_mem_fraction, use_pin=pin, weights_gib=weights_gib, hub=hub,
                        version=engine_version)
        result = run(target)
        if as_json:
            emit_json(result)
        else:
            print_plan(result)
        return 0 if result["fits"] else 1

    run_guarded(body, as_json)
