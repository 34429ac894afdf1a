"""`explain` as text: a table of S, D, bytes per slot and token, the pools, then warnings and log lines."""

from __future__ import annotations


from typing import Any

from rich.console import Console
from rich.table import Table

GIB = 1 << 30


def _gib(n: int | float | None) -> str:
    return "-" if n is None else f"{n / GIB:,.2f} GiB"


def _bytes(n: int | None) -> str:
    return "-" if n is None else f"{n:,} B"


def _num(n: object) -> str:
    return "-" if n is None else f"{n:,}" if isinstance(n, int) else str(n)


def _print_resolved(c: Console, args: dict[str, Any]) -> None:
    """The typed and derived arguments the engine held when it refused (defaults are in --json `args`)."""
    shown = {k: a for k, a in args.items() if a["source"] != "default"}
    if not shown:
        return
    c.print("[bold]Resolved arguments when it refused[/] (typed and derived; defaults in --json):")
    for name, a in shown.items():
        rule = f" by {a['rule']}" if a["source"] == "derived" and a.get("rule") else ""
        c.print(f"  {name} = {a['value']!r} ({a['source']}{rule})", markup=False, highlight=False)


def print_verdict(v: dict[str, Any], where: str, c: Console) -> None:
    """The verdict in one line (serves, or the phase it fails in and why), then what it rests on."""
    if v["serves"]:
        c.print(f"[green bold]on {where}: boots and serves[/] - {v['why']}", highlight=False)
    else:
        c.print(f"[red bold]on {where}: fails ({v['phase']})[/] - {v['why']}", highlight=False)
    conf = v.get("confidence")
    if conf:
        c.print(f"confidence: [bold]{conf['level']}[/] - {conf['note']}", highlight=False)


def print_explain(r: dict[str, Any], console: Console | None = None) -> None:
    """The explain result as a compact table, then warnings, predicted log lines and any refusal."""
    c = console or Console()
    m = r["model"]
    c.print(f"[bold]{m['architecture']}[/] ({m['family']}, {len(m['linear_layer_ids'])} state + "
            f"{len(m['full_attention_layer_ids'])} full-attention layers) from {m['source']} - sglang {r['engine']['version']}")
    t = Table(show_header=True, header_style="bold")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_column("from")
    prov = r.get("provenance", {})

    def row(label: str, value: str, key: str | None = None, note: str = "") -> None:
        p = prov.get(key, {}) if key else {}
        t.add_row(label, value, note or (f"{p.get('source', '')}: {p.get('note', '')}" if p else ""))

    row("S  state slots / request", _num(r["slots_per_request"]), "slots_per_request")
    row("D  verify states / request", _num(r["draft_states_per_request"]), "draft_states_per_request")
    row("state bytes / slot", _bytes(r["state_bytes_per_slot"]), "state_bytes_per_slot")
    row("KV bytes / token", _bytes(r["kv_bytes_per_token"]), "kv_bytes_per_token")
    mem = r.get("memory") or {}
    if r.get("pool_budget_gib") is not None:
        row("pool budget", f"{r['pool_budget_gib']:.2f} GiB", note=(
            "total_rest_memory from the card's memory timeline" if mem.get("timeline") else "input: total_rest_memory"))
    if r.get("max_mamba_cache_size") is not None:
        row("K  max_mamba_cache_size", _num(r["max_mamba_cache_size"]), note=f"engine rule: {r['mamba_pool_branch']} branch")
        row("state pool", _gib(r["state_pool_bytes"]), note="(K + 1) x state/slot")
        if r.get("spec_scratch_bytes"):
            row("verify scratch", _gib(r["spec_scratch_bytes"]), note=f"{r['spec_scratch_rows']} rows x D x state/slot")
        row("KV budget", _gib(r["kv_budget_bytes"]), note="engine rule")
        row("KV tokens  max_total_num_tokens", _num(r["max_total_num_tokens"]), note="KV budget // KV/token, page-floored")
        row("max running requests", _num(r["max_running_requests"]), note=f"bound by {r['binding_limit']}")
    c.print(t)
    if mem.get("verdict") is not None:
        print_verdict(mem["verdict"], (mem.get("timeline") or {}).get("gpu") or "this card", c)
    if r.get("error"):
        c.print(f"[red bold]engine refuses to start:[/] {r['error']['message']}")
        c.print(f"  rule: {r['error']['rule']}")
        _print_resolved(c, r.get("args", {}))
    for w in r.get("warnings", []):
        c.print(f"[yellow]warning:[/] {w}")
    for note in m.get("notes", []):
        c.print(f"[dim]note: {note}[/]")
    if r.get("log_lines"):
        c.print("[bold]Boot-log lines to expect (rank 0):[/]")
        for line in r["log_lines"]:
            c.print(f"  {line}", markup=False, highlight=False)


def print_paged_explain(d: dict[str, Any], console: Console | None = None) -> None:
    """The resolved cache arguments, the page unification, the groups and the logged capacity."""
    c = console or Console()
    r, p = d["resolved"], d["pages"]
    c.print(f"[bold]vLLM {d['engine']['version']}[/bold]  {d['model']['ref']} ({d['model']['family']}, "
            f"{d['model']['state_layers']} state + {d['model']['attention_layers']} attention layers)")
    asked = r["block_size_requested"] or f"{d['platform']['attention_backend']} default {d['block_size_before_alignment']}"
    c.print(f"prefix caching {'on' if r['enable_prefix_caching'] else 'off'} -> mamba_cache_mode {r['mamba_cache_mode']}"
            f"; block_size {d['block_size']} (asked {asked}), mamba_block_size {d['mamba_block_size']}")
    c.print(f"pages: attention {p['attention_before_unification']:,} B -> {p['attention_after_unification']:,} B, "
            f"state {p['state_unpadded']:,} B padded to {p['unified']:,} B (+{p['state_padding_pct']}%)")
    t = Table(show_header=True, header_style="bold")
    for col in ("group", "layers", "block size", "blocks / request"):
        t.add_column(col)
    for i, g in enumerate(d["groups"]):
        t.add_row(f"{i} {g['kind']}", str(g["layers"]), f"{g['block_size']:,}", str(g["blocks_per_request"]))
    c.print(t)
    if d.get("memory"):
        m = Table(show_header=True, header_style="bold", title="available KV memory from the card alone")
        for col in ("term", "GiB", "source", "from"):
            m.add_column(col)
        for name, term in d["memory"]["timeline"].items():
            m.add_row(name.removesuffix("_gib"), f"{term['value']:.3f}", term["source"], term.get("note", ""))
        c.print(m)
    pool = (f"{d['num_blocks']:,} blocks of {d['bytes_per_block']:,} B from {d['available_kv_memory_bytes']:,} B"
            if d["num_blocks"] is not None else f"blocks of {d['bytes_per_block']:,} B")
    c.print(f"{pool}; a request at {d['max_model_len']:,} tokens takes {d['blocks_per_request']} blocks, "
            f"{d['state_pages_per_request']} of them state pages")
    for line in d["predicted_lines"]:
        c.print(f"  [dim]predicted log:[/dim] {line}")
    for note in r["notes"] + d["notes"]:
        c.print(f"  [yellow]note:[/yellow] {note}")
    if d.get("verdict") is not None:
        checks = Table(show_header=True, header_style="bold", title="vLLM's startup checks, in its order")
        for col in ("phase", "check", "", "detail"):
            checks.add_column(col)
        for chk in d["checks"]:
            mark = {True: "ok", False: "[red]fails[/red]", None: "-"}[chk["passed"]]
            checks.add_row(chk["phase"], chk["name"], mark, chk["detail"])
        c.print(checks)
        platform = d["platform"]
        where = platform["gpu"] or (f"a {platform['gpu_memory_gib']:g} GiB card" if "gpu_memory_gib" in platform
                                    else "this memory")
        print_verdict(d["verdict"], where, c)


def show_explain(r: dict[str, Any], layout: str) -> None:
    """An explain payload as text, in the terms of the engine's memory layout (engine.api.ServingEngine.layout)."""
    if layout == "paged_pool":
        print_paged_explain(r)
        return
    from hybridplan.render.timeline import print_timeline

    print_explain(r)
    if r.get("memory"):
        print_timeline(r["memory"]["timeline"])
