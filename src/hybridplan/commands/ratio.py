"""`hybridplan ratio`: the balanced --mamba-full-memory-ratio and the --max-mamba-cache-size pin for a workload."""

from __future__ import annotations

from typing import List, Optional

import typer

from hybridplan.commands.app import COMMAND_HELP, app, command_tokens, emit_json, run_guarded
from hybridplan.commands import options as opt

GIB = 1 << 30


def print_ratio(r: dict) -> None:
    """The ratio result as a table: inputs, the formula with its numbers, the ratio, the pin and whether it fits."""
    from rich.console import Console
    from rich.table import Table

    c = Console()
    f = r["formula"]
    t = Table(show_header=True, header_style="bold")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_column("from")
    t.add_row("S  state slots / request", str(r["slots_per_request"]), "engine rule: _calculate_mamba_ratio")
    t.add_row("D  verify states / request", str(r["draft_states_per_request"]), "engine rule")
    t.add_row("state bytes / slot", f"{r['state_bytes_per_slot']:,} B", "engine rule (config)")
    t.add_row("KV bytes / token", f"{r['kv_bytes_per_token']:,} B", "engine rule (draft KV folded in)")
    t.add_row("L  tokens / request", f"{r['request_length']:,}", "input")
    t.add_row("C  concurrent requests", str(r["concurrency"]), "input")
    if r["budget"]:
        t.add_row("pool budget", f"{r['budget']['rest_gib']:.2f} GiB", r["budget"]["source"])
    c.print(t)
    if f["value"] is not None:
        c.print(f"{f['text']} = ({f['S']} + {f['D']}) x {f['state_bytes_per_slot']:,} / ({f['L']:,} x "
                f"{f['kv_bytes_per_token']:,}) = {f['value']:.4f}", highlight=False)
    if r["mamba_full_memory_ratio"] is not None:
        how = "exact against the engine's sizing" if r["budget"] else "continuous balance point"
        c.print(f"[bold]--mamba-full-memory-ratio {r['mamba_full_memory_ratio_text']}[/]  ({how}; binding: "
                f"{r['binding_pool']})")
        if r.get("state_concurrency") is not None:
            c.print(f"  at this ratio: the state pool admits {r['state_concurrency']} and the KV pool holds "
                    f"{r['kv_concurrency']} requests of {r['request_length']:,} tokens per rank")
    else:
        c.print(f"[yellow]no balanced ratio:[/] {r['reason']}")
    c.print(f"[bold]or: --max-mamba-cache-size {r['max_mamba_cache_size_pin']}[/]  ({f['pin_text']})")
    if r["pin_fits"] is not None:
        verdict = "[green]fits[/]" if r["pin_fits"] else f"[red]does not fit:[/] {r['pin_check']['reason']}"
        c.print(f"  with this budget the pin {verdict}")
    for w in r["warnings"]:
        c.print(f"[yellow]warning:[/] {w}")


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
) -> None:
    """The --mamba-full-memory-ratio that balances state and KV for L-token requests, and the pin for C of them."""

    def body() -> int:
        from hybridplan.hardware.catalog import from_options
        from hybridplan.planner.ratio import balanced_ratio

        result = balanced_ratio(command_tokens(command), request_length=request_length, concurrency=concurrency,
                                budget=pool_budget_gib, gpu=from_options(gpu, gpu_memory_gib), version=engine_version)
        if as_json:
            emit_json(result)
        else:
            print_ratio(result)
        return 0

    run_guarded(body, as_json)
