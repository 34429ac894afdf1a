"""`compare` as text: every engine in one table (its verdict and confidence too), then why they differ, each failing engine's
cheapest change, and what a launch carried from one engine to another changed or left behind."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def _state(leg: dict[str, Any], layout: str) -> str:
    """How one engine holds a request's state: pages of the one pool, or slots of a fixed state pool."""
    if layout == "paged_pool":
        if leg["state_pages_per_request"] is None:
            return "-"
        return f"{leg['state_pages_per_request']} pages a request ({leg['mamba_cache_mode']})"
    if leg["state_slots"] is None:
        return "-"
    return f"{leg['state_slots']} slots, {leg['slots_per_request']} a request"


def _num(n: Any, fmt: str = ",") -> str:
    return "-" if n is None else format(n, fmt)


def _verdict(leg: dict[str, Any]) -> str:
    """serves / fails (phase), or not modelled."""
    if leg.get("modelled") is False:
        return "not modelled"
    v = leg.get("verdict")
    if v is None:
        return "-"
    return "serves" if v["serves"] else f"fails ({v['phase']})"


def _confidence(leg: dict[str, Any]) -> str:
    """How far the verdict rests on measured launches (its confidence level), as explain's confidence line says."""
    conf = (leg.get("verdict") or {}).get("confidence")
    return "-" if conf is None else str(conf["level"])


def print_compare(d: dict[str, Any], layouts: dict[str, str], console: Console | None = None) -> None:
    """`compare`: the engines in one table (`layouts`: each engine's memory layout, by name), then why they differ."""
    c = console or Console()
    legs = {name: d[name] for name in layouts}
    card = d["gpu"] or (f"{d['gpu_memory_gib']:g} GiB card" if d.get("gpu_memory_gib") is not None else None)
    memory = (f"{d['memory_gib']:g} GiB of cache memory per rank" if d["memory_gib"] is not None
              else f"each engine's cache memory on one {card}")
    c.print(f"[bold]{d['model']}[/bold]: {memory}, requests of {d['request_length']:,} tokens, TP{d['tp']}")
    t = Table(show_header=True, header_style="bold")
    t.add_column("")
    for name, leg in legs.items():
        t.add_column(f"{name} {leg['version']}")
    sized = {name: leg for name, leg in legs.items() if leg.get("modelled") is not False}
    if any(leg.get("verdict") is not None for leg in sized.values()):
        t.add_row(f"verdict{' on ' + card if card else ''}", *(_verdict(leg) for leg in legs.values()))
        t.add_row("confidence", *(_confidence(leg) for leg in legs.values()))
    if d["memory_gib"] is None:
        t.add_row("cache GiB per rank", *(_num(leg.get("cache_memory_gib"), ".2f") for leg in legs.values()))
    t.add_row("KV tokens", *(_num(leg.get("kv_tokens")) for leg in legs.values()))
    t.add_row("state", *(_state(leg, layouts[name]) if name in sized else "-" for name, leg in legs.items()))
    t.add_row("requests at this length", *(_num(leg.get("requests_at_length"), "") for leg in legs.values()))
    c.print(t)
    for line in d["why"]:
        c.print(f"  - {line}")
    for name, leg in sized.items():
        fix = leg.get("cheapest_change")
        if fix is not None:
            then = f": {fix['command']}" if fix.get("command") else ""
            reach = f" ({fix['reaches']})" if fix.get("reaches") else ""
            c.print(f"{name}'s cheapest change: {fix.get('change') or fix.get('why') or 'none found'}{reach}{then}",
                    highlight=False)
        launch = leg.get("launch")
        if launch is not None and launch["from"] is not None:
            c.print(f"{name}'s launch, carried from the {launch['from']} launch: {leg['command']}", highlight=False)
            for line in launch["added"]:
                c.print(f"  added {line}", highlight=False)
            for line in launch["not_carried"]:
                c.print(f"  not carried: {line}", highlight=False)
