"""`logs parse` and `logs check` as rich tables; the same dicts are the --json output."""

from __future__ import annotations


from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hybridplan.render.format import cell

_LABELS = {
    "pre_load_avail_gib": "free before load (GiB)", "weights_gib": "weights (GiB)",
    "avail_after_load_gib": "free after load (GiB)", "max_mamba_cache_size": "K  max_mamba_cache_size",
    "conv_state_gib": "conv state (GiB)", "ssm_state_gib": "SSM state (GiB)", "kv_dtype": "KV dtype",
    "kv_tokens": "KV tokens", "k_gib": "K size (GiB)", "v_gib": "V size (GiB)",
    "max_total_num_tokens": "max_total_num_tokens", "max_running_requests": "max running requests",
    "context_len": "context length", "cuda_graph_gib": "CUDA graphs (GiB)", "avail_after_pools_gib": "free after pools (GiB)",
}


def print_parse(d: dict[str, Any], console: Console | None = None) -> None:
    """`logs parse`: one column per rank (rank 0 first), then the failure."""
    c = console or Console()
    ranks = d.get("ranks") or {"": {k: v for k, v in d.items() if k != "ranks"}}
    t = Table(show_header=True, header_style="bold")
    t.add_column("quantity (measured)")
    for tag in ranks:
        t.add_column(tag or "value", justify="right")
    for key in _LABELS:  # the payload's own order
        if all(key not in r for r in ranks.values()):
            continue
        t.add_row(_LABELS[key], *[cell(r.get(key)) for r in ranks.values()])
    c.print(t)
    if d.get("failure"):
        c.print(f"[bold red]failed[/] in phase [bold]{d['failure']['phase']}[/]: {escape(d['failure']['message'])}")
    _print_failure_chain(c, d.get("failure"))
    _print_missing(c, d)


def _print_failure_chain(c: Console, failure: dict[str, Any] | None) -> None:
    """The exceptions raised after the root error (while handling it, or carrying it out of the engine process)."""
    chained = [] if not failure else failure.get("chained") or []
    for text in [chained] if isinstance(chained, str) else chained:
        c.print(f"  [dim]then raised:[/] {escape(text)}")


def _print_missing(c: Console, d: dict[str, Any]) -> None:
    """The lines a check needs that the log lacks."""
    for line in d.get("missing") or []:
        c.print(f"  [yellow]not in the log:[/] {escape(line)}")


def _verdict(c: Console, d: dict[str, Any]) -> None:
    """The last line: explained, unexplained, or nothing compared (a check on nothing never passes)."""
    if d["explained"]:
        c.print("[green]every difference is explained[/]")
    elif not d.get("compared"):
        c.print("[bold red]nothing compared[/]: the log states none of the figures the check holds against the model"
                + (" (the boot failed first)" if d.get("failure") else ""))
    else:
        c.print("[bold red]unexplained differences[/]")


def print_check(d: dict[str, Any], console: Console | None = None) -> None:
    """`logs check`: the proxies, then predicted vs observed with the rule that explains each difference."""
    c = console or Console()
    source = {"option": "as asked", "log": "the log's own version", "default": "the default"}[d["version_source"]]
    c.print(f"engine model sglang {d['engine']['version']} ({source})"
            + (f", log from sglang {escape(d['log_version'])}" if d.get("log_version") else ""))
    for key, p in d["proxies"].items():
        if p["value"] is not None:
            c.print(f"  {key} = {p['value']}  ({p['source']}: {escape(p['note'])})")
    for note in d.get("notes", []):
        c.print(f"  note: {escape(note)}")
    if d["rows"]:
        t = Table(show_header=True, header_style="bold")
        for col in ("quantity", "observed", "predicted", "rule"):
            t.add_column(col, justify="right" if col in ("observed", "predicted") else "left")
        for r in d["rows"]:
            t.add_row(r["quantity"], cell(r["observed"]), cell(r["predicted"]), r["rule"])
        c.print(t)
        for r in d["rows"]:
            if r["explanation"]:
                c.print(f"  [bold]{r['quantity']}[/]: {escape(r['explanation'])}")
    if d.get("refusal"):
        ref = d["refusal"]
        c.print(f"[bold red]refusal[/] ({ref['kind']}): {escape(ref['observed'])}")
        for r in ref["rows"]:
            c.print(f"  {r['quantity']}: observed {r['observed']}, predicted {r['predicted']} - {r['rule']}"
                    + (f": {r['explanation']}" if r["explanation"] else ""), markup=False)
        c.print(f"  {ref['explanation']}", markup=False)
    elif d.get("failure"):
        c.print(f"[bold red]failed[/] in phase {d['failure']['phase']}: {escape(d['failure']['message'])}")
        _print_failure_chain(c, d["failure"])
    if d.get("diagnosis"):
        _print_diagnosis(c, d["diagnosis"])
    _print_missing(c, d)
    _verdict(c, d)


def _print_diagnosis(c: Console, diag: dict[str, Any]) -> None:
    """The change `logs check` suggests, then the alternatives, each with the numbers it used."""
    for i, change in enumerate([diag, *diag.get("alternatives", [])]):
        head = "[bold]fix[/]" if i == 0 else "  or"
        flags = " ".join(change["flags"]) or (f"{change['knob']} (value needs P)" if change["knob"] else "none fits")
        c.print(f"{head} ({change['phase']}): [bold]{escape(flags)}[/]")
        c.print(f"    {change['why']}", markup=False)


def _plain(x: Any) -> str:
    return f"{x:,}" if isinstance(x, int) else str(x)


def print_paged_check(d: dict[str, Any], console: Console | None = None) -> None:
    """`logs check --engine vllm`: predicted vs logged, with the rule behind each difference."""
    c = console or Console()
    memory = "no logged available KV memory" if d["available_kv_gib"] is None else \
        f"{d['available_kv_gib']} GiB of available KV memory"
    c.print(f"[bold]vLLM log[/bold] (release {d['log_release'] or 'not stated'}), checked by hybridplan's vLLM "
            f"{d['modelled_release']} model on sm{d['sm']} from {memory}")
    t = Table(show_header=True, header_style="bold")
    for col in ("quantity", "predicted", "logged", ""):
        t.add_column(col)
    for row in d["checks"]:
        pred = row["predicted"]
        shown = " / ".join(_plain(x) for x in pred) if isinstance(pred, list) else _plain(pred)
        t.add_row(row["quantity"], shown, _plain(row["logged"]),
                  "ok" if row["match"] else f"differs: {row['rule']}")
    if d["checks"]:
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
    _print_vllm_failure(c, d.get("failure"))
    if d.get("no_verdict"):
        c.print(f"  [dim]{escape(d['no_verdict'])}[/dim]")
    _print_missing(c, d)
    if not d["explained"] and not d.get("compared"):
        _verdict(c, d)
    else:
        c.print("explained" if d["explained"] else "[red]not explained[/red]")


def _print_vllm_failure(c: Console, failure: dict[str, Any] | None) -> None:
    if failure:
        c.print(f"[bold red]failed[/]: {escape(failure['type'])}: {escape(failure['message'])}")
        _print_failure_chain(c, failure)


def show_check(d: dict[str, Any], layout: str) -> None:
    """A logs-check payload as text, in the terms of the engine's memory layout."""
    (print_paged_check if layout == "paged_pool" else print_check)(d)


def show_parse(d: dict[str, Any], layout: str) -> None:
    """A logs-parse payload as text: the per-rank table of a pools log, or each stated figure of a paged-pool log."""
    if layout != "paged_pool":
        print_parse(d)
        return
    c = Console()
    t = Table(show_header=True, header_style="bold")
    t.add_column("stated in the log")
    t.add_column("value", justify="right")
    for part in (d["capacity"], d["memory"]):
        for key, value in part.items():
            if value is not None and not isinstance(value, dict):
                t.add_row(key, cell(value))
    c.print(t)
    _print_vllm_failure(c, d.get("failure"))
    _print_missing(c, d)
