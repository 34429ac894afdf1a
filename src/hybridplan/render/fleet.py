"""`fleet` as text: the ranked layouts of every engine in one table, then the chosen layout's launch, node by node,
each command with the engine's verdict, and where a limit the memory model does not know is likely to bind."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

SHOWN = 12  # rows printed without --all
GIB = 1 << 30


def _n(x: Any) -> str:
    return "-" if x is None else f"{x:,}" if isinstance(x, int) else str(x)


def _servers(servers: dict[str, int]) -> str:
    return " + ".join(f"{n} {role}{'s' if n != 1 else ''}" for role, n in servers.items()) or "-"


def _row(r: dict[str, Any]) -> list[str]:
    headroom = "-" if r["headroom"] is None else f"{r['headroom'] * 100:+.0f}%"
    if r["refusal"]:
        what = f"refused: {r['refusal']}"
    elif not r["feasible"]:
        what = r["why"] or ""
    else:
        what = r["binding"] or ""
    return [str(r["rank"]), r["engine"], r["layout"], _n(r["gpus"]), _servers(r["servers"]), _n(r["requests_per_server"]),
            _n(r["requests_per_gpu"]), _n(r["kv_tokens_per_server"]), _n(r["state_slots_per_server"]),
            escape(what), r["confidence"] or "-", headroom]


def print_fleet(d: dict[str, Any], console: Console | None = None, show_all: bool = False) -> None:
    """The ranked table, then the chosen launch (or why nothing serves)."""
    c = console or Console()
    bound = f", {d['gpus_available']} GPUs available" if d["gpus_available"] else ""
    c.print(f"[bold]{escape(d['model'])}[/bold] on {d['gpu']} ({d['gpus_per_node']} a node{bound}): "
            f"{d['concurrency']:,} concurrent sessions of {d['request_length']:,} tokens; "
            + ", ".join(f"{name} {v}" for name, v in d["engines"].items()))
    t = Table(show_header=True, header_style="bold")
    for col in ("#", "engine", "layout", "GPUs", "servers", "req/server", "req/GPU", "KV tokens/server",
                "state slots/server", "binds", "confidence", "headroom"):
        t.add_column(col)
    rows = d["rows"] if show_all else d["rows"][:SHOWN]
    for r in rows:
        t.add_row(*_row(r))
    c.print(t)
    if len(rows) < len(d["rows"]):
        c.print(f"  ({len(d['rows']) - len(rows)} more rows: --all)")
    c.print(f"  {d['ranking']}")
    for tried in d["tried"]:
        c.print(f"  row {tried['row']} ({tried['engine']} {escape(tried['layout'])}) was not launched: "
                + escape("; ".join(tried["not_serving"])))
    if d["launch"] is None:
        c.print(f"[bold]no layout chosen[/bold]: {escape(d.get('why') or 'no launch serves')}")
        return
    chosen = d["rows"][d["chosen"] - 1]
    _print_launch(c, chosen, d["launch"])
    if d["manifests"] is not None:
        c.print("manifests: --manifest k8s" + (" or --manifest compose" if d["manifests"]["compose"] else
                                                f" (compose: {d['manifests']['compose_why']})"))


def _print_launch(c: Console, row: dict[str, Any], launch: dict[str, Any]) -> None:
    c.print(f"[bold]row {row['rank']}: {launch['engine']} {launch['version']} {escape(launch['layout'])}[/bold], "
            f"{row['gpus']} GPUs, {row['sessions']:,} sessions held")
    for role in launch["roles"]:
        gpus = f", {role['gpus_per_node']} GPUs a node" if role["gpus_per_node"] else ""
        load = f", {role['requests']:,} session{'s' if role['requests'] != 1 else ''} each" if role["requests"] else ""
        c.print(f"  {role['role']} x{role['servers']}{gpus}{load} ({role['image']}):")
        for rank in role["ranks"]:
            env = " ".join(f"{k}={v}" for k, v in rank["env"])
            node = f"node {rank['node_rank']}: " if len(role["ranks"]) > 1 else ""
            c.print(f"    {node}{escape((env + ' ' if env else '') + ' '.join(rank['argv']))}", soft_wrap=True)
            if rank["serves"] is not None:
                c.print(f"      verdict: {escape(rank['verdict'])}")
    for note in launch["notes"]:
        c.print(f"  note: {escape(note)}")
    if row["handover"]:
        h = row["handover"]
        c.print(f"  handover per session: {h['state_bytes'] / GIB:.2f} GiB state + {h['kv_bytes'] / GIB:.2f} GiB KV "
                f"over {h['ranks']} prefill ranks")
    for line in row["limits"]:
        c.print(f"  likely to bind first (not modelled): {escape(line)}")
    for line in row["notes"]:
        c.print(f"  note: {escape(line)}")
