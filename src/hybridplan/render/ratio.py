"""`ratio` as text: the inputs, the formula with its numbers, the ratio and the pin."""

from __future__ import annotations


from typing import Any

from rich.console import Console
from rich.table import Table


def print_ratio(r: dict[str, Any], console: Console | None = None) -> None:
    """The ratio result as a table: inputs, the formula with its numbers, the ratio, the pin and whether it fits."""
    c = console or Console()
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
