"""`explain --engine vllm` as text: the vLLM plan's pages, groups, capacity and the boot-log lines it predicts."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def print_vllm_explain(d: dict[str, Any], console: Console | None = None) -> None:
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


def _num(x: Any) -> str:
    return f"{x:,}" if isinstance(x, int) else str(x)


def print_vllm_check(d: dict[str, Any], console: Console | None = None) -> None:
    """`logs check --engine vllm`: predicted vs logged, with the rule behind each difference."""
    c = console or Console()
    c.print(f"[bold]vLLM log[/bold] (release {d['log_release'] or 'not stated'}), checked by hybridplan's vLLM "
            f"{d['modelled_release']} model on sm{d['sm']} from {d['available_kv_gib']} GiB of available KV memory")
    t = Table(show_header=True, header_style="bold")
    for col in ("quantity", "predicted", "logged", ""):
        t.add_column(col)
    for row in d["checks"]:
        pred = row["predicted"]
        shown = " / ".join(_num(x) for x in pred) if isinstance(pred, list) else _num(pred)
        t.add_row(row["quantity"], shown, _num(row["logged"]),
                  "ok" if row["match"] else f"differs: {row['rule']}")
    c.print(t)
    est = (d.get("memory") or {}).get("estimates")
    if est is not None and est["terms"]:
        e = Table(title="the card-alone memory timeline against the log (GiB)", show_header=True,
                  header_style="bold")
        for col in ("term", "estimate", "logged", "error", "from"):
            e.add_column(col)
        for term in est["terms"]:
            logged = "-" if term["logged_gib"] is None else f"{term['logged_gib']:.2f}"
            error = "-" if term["error_gib"] is None else f"{term['error_gib']:+.2f}"
            e.add_row(term["term"], f"{term['estimate_gib']:.2f}", logged, error, term["source"])
        c.print(e)
    elif est is not None:
        c.print(f"  [dim]no card-alone estimate: {est['note']}[/dim]")
    c.print("explained" if d["explained"] else "[red]not explained[/red]")


def print_vllm_plan(d: dict[str, Any], console: Console | None = None) -> None:
    """`plan --engine vllm`: the baseline, the candidates (cheapest first) and the launch to run."""
    c = console or Console()
    t_ = d["target"]
    m = d["measured"]
    source = (f"from the boot measured at gpu_memory_utilization {m['gpu_memory_utilization']:g} "
              f"({m['available_kv_gib']} GiB KV)" if m["source"] == "boot" else
              f"from the card alone (no boot log; utilization up to {m['ceiling']:g}: {m['rule']})")
    c.print(f"[bold]vLLM {d['engine_version']} plan[/bold]: {t_['concurrency']} requests of {t_['request_length']:,} "
            f"tokens, {source}")
    t = Table(show_header=True, header_style="bold")
    for col in ("changes", "util", "KV GiB", "mode", "block", "KV tokens", "concurrency", "fits"):
        t.add_column(col)
    rows = ([("baseline", d["baseline"])] if d["baseline"] else []) + [("", r) for r in d["candidates"]]
    for label, r in rows:
        changes = label or " ".join(f"{k} {v}".strip() for k, v in r["changes"].items()) or "(as launched)"
        t.add_row(changes, f"{r['gpu_memory_utilization']:g}", f"{r['available_kv_gib']:.2f}", r["mamba_cache_mode"],
                  f"{r['block_size']:,}", f"{r['kv_cache_tokens']:,}", f"{r['max_concurrency']:.2f}x",
                  "yes" if r["fits"] else "no")
    c.print(t)
    c.print(d["command"] if d["fits"] else "[red]no candidate serves the target within --max-util[/red]")
    for flag, why in (d["best"] or {}).get("why", {}).items():
        c.print(f"  change {flag} {d['best']['changes'][flag]}".rstrip() + f": {why}")
    for w in d["warnings"]:
        c.print(f"  [yellow]note:[/yellow] {w}")


def print_compare(d: dict[str, Any], console: Console | None = None) -> None:
    """`compare`: the two engines in one table, then why they differ."""
    c = console or Console()
    s, v = d["sglang"], d["vllm"]
    memory = (f"{d['memory_gib']:g} GiB of cache memory per rank" if d["memory_gib"] is not None
              else f"each engine's cache memory on one {d['gpu']}")
    c.print(f"[bold]{d['model']}[/bold]: {memory}, requests of {d['request_length']:,} tokens, TP{d['tp']}")
    t = Table(show_header=True, header_style="bold")
    for col in ("", f"sglang {s['version']}", f"vllm {v['version']}"):
        t.add_column(col)
    if d["memory_gib"] is None:
        t.add_row("cache GiB per rank", f"{s['cache_memory_gib']:.2f}", f"{v['cache_memory_gib']:.2f}")
    t.add_row("KV tokens", f"{s['kv_tokens']:,}", f"{v['kv_tokens']:,}")
    t.add_row("state", f"{s['state_slots']} slots, {s['slots_per_request']} a request",
              f"{v['state_pages_per_request']} pages a request ({v['mamba_cache_mode']})")
    t.add_row("requests at this length", str(s["requests_at_length"]), str(v["requests_at_length"]))
    c.print(t)
    for line in d["why"]:
        c.print(f"  - {line}")
