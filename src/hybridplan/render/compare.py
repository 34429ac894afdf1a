"""`compare` as text: every engine in one table, then why they differ."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def _state(leg: dict[str, Any], layout: str) -> str:
    """How one engine holds a request's state: pages of the one pool, or slots of a fixed state pool."""
    if layout == "paged_pool":
        return f"{leg['state_pages_per_request']} pages a request ({leg['mamba_cache_mode']})"
    return f"{leg['state_slots']} slots, {leg['slots_per_request']} a request"


def print_compare(d: dict[str, Any], layouts: dict[str, str], console: Console | None = None) -> None:
    """`compare`: the engines in one table (`layouts`: each engine's memory layout, by name), then why they differ."""
    c = console or Console()
    legs = {name: d[name] for name in layouts}
    memory = (f"{d['memory_gib']:g} GiB of cache memory per rank" if d["memory_gib"] is not None
              else f"each engine's cache memory on one {d['gpu']}")
    c.print(f"[bold]{d['model']}[/bold]: {memory}, requests of {d['request_length']:,} tokens, TP{d['tp']}")
    t = Table(show_header=True, header_style="bold")
    t.add_column("")
    for name, leg in legs.items():
        t.add_column(f"{name} {leg['version']}")
    if d["memory_gib"] is None:
        t.add_row("cache GiB per rank", *(f"{leg['cache_memory_gib']:.2f}" for leg in legs.values()))
    t.add_row("KV tokens", *(f"{leg['kv_tokens']:,}" for leg in legs.values()))
    t.add_row("state", *(_state(leg, layouts[name]) for name, leg in legs.items()))
    t.add_row("requests at this length", *(str(leg["requests_at_length"]) for leg in legs.values()))
    c.print(t)
    for line in d["why"]:
        c.print(f"  - {line}")
