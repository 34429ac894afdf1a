"""`plan` as text: the command or why nothing fits, then where the card's memory goes."""

from __future__ import annotations


from typing import Any

from rich.console import Console
from rich.table import Table

from hybridplan.render.explain import print_verdict


def print_plan(r: dict[str, Any], console: Console | None = None) -> None:
    """The command (or why nothing fits and the cheapest change), the memory breakdown, K, KV tokens and the margin."""
    c = console or Console()
    tgt = r["target"]
    setup = "your command" if tgt.get("command") else f"spec {tgt['spec'] or 'none'}"
    c.print(f"[bold]{tgt['model']}[/] ({tgt['quant'] or 'as given'}) on {tgt['gpu']['name']}: {tgt['concurrency']} "
            f"x {tgt['request_length']:,}-token requests, {setup}")
    if not r["fits"]:
        c.print(f"[red bold]nothing fits:[/] {r['why']}", highlight=False)
        for ch in r["changes_that_fit"]:
            c.print(f"  would fit: {ch['change']}", highlight=False)
        if r["cheapest_change"]:
            c.print(f"[bold]cheapest change:[/] {r['cheapest_change']}", highlight=False)
        for w in r.get("warnings", []):
            c.print(f"[yellow]warning:[/] {w}", highlight=False)
        return
    c.print(r["command"], markup=False, highlight=False, soft_wrap=True)
    s = r["split"]
    how = (f"--mamba-full-memory-ratio {s['mamba_full_memory_ratio_text']} ("
           + ("yours, kept" if s["kept"] else "balanced") + f"; or --max-mamba-cache-size "
           f"{s['max_mamba_cache_size_pin']})" if s["kind"] == "ratio"
           else f"--max-mamba-cache-size {s['max_mamba_cache_size_pin']} (pin" + (", yours, kept)" if s["kept"] else ")"))
    c.print(f"state pool: {how}", highlight=False)
    print_fraction(r, c)
    if not r["changes"]:
        c.print("changes: none (the command serves the target as it is)", highlight=False)
    for ch in r["changes"]:
        old = ch["old"] if ch["old"] is not None else "unset"
        new = ch["new"] if ch["new"] is not None else "removed"
        c.print(f"  change {ch['flag']}: {old or 'on'} -> {new or 'on'}: {ch['why']}", highlight=False)
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


def print_fraction(r: dict[str, Any], c: Console) -> None:
    """The fraction against the engine's default and the evidence ceiling, what the step up buys, the confidence."""
    m = r["mem_fraction"]
    if "engine_default" in m:
        c.print(f"mem fraction: engine default {m['engine_default']}, recommended {m['recommended']}, evidence ceiling "
                f"{m['ceiling']} ({m['rule']})", highlight=False)
    elif m.get("user_max") is not None:
        c.print(f"mem fraction: {m['recommended']} (your --max-mem-fraction)", highlight=False)
    up = m.get("step_up")
    if up and "kv_tokens" in up:
        c.print(f"  the step up from {up['engine_default']} buys {up['kv_tokens']:+,} KV tokens, "
                f"{up['state_slots']:+,} state slots, {up['requests']:+,} requests"
                + ("" if up["serves_at_default"] else " (the default does not serve the target)"), highlight=False)
    elif up:
        c.print(f"  at the engine default {up['engine_default']}: {up['why']}", highlight=False)
    conf = r.get("confidence")
    if conf:
        c.print(f"confidence: [bold]{conf['level']}[/] - {conf['note']}", highlight=False)
        if conf["unknowns"]:
            c.print(f"  unknown: {'; '.join(conf['unknowns'])}", highlight=False)


def print_paged_plan(d: dict[str, Any], console: Console | None = None) -> None:
    """`plan --engine vllm`: the baseline, the candidates (cheapest first), the launch to run, and its verdict with
    the confidence (explain --engine vllm's on that launch)."""
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
    if d.get("cheapest_change"):
        ch = d["cheapest_change"]
        c.print(f"[bold]cheapest change:[/] {ch['change']}: {ch['reaches']}", highlight=False)
    if d.get("verdict"):
        where = "the card" if m["source"] == "card" else "the measured boot's memory"
        print_verdict(d["verdict"], where if d["fits"] else f"{where}, at the target's length", c)
    for w in d["warnings"]:
        c.print(f"  [yellow]note:[/yellow] {w}")


def show_plan(r: dict[str, Any], layout: str) -> None:
    """A plan payload as text, in the terms of the engine's memory layout."""
    (print_paged_plan if layout == "paged_pool" else print_plan)(r)
