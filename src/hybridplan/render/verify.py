"""Human-readable output of the verify dicts (rich); the same dicts are the --json output."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hybridplan.verify.logparse import KEYS

_LABELS = {
    "pre_load_avail_gib": "free before load (GiB)", "weights_gib": "weights (GiB)",
    "avail_after_load_gib": "free after load (GiB)", "max_mamba_cache_size": "K  max_mamba_cache_size",
    "conv_state_gib": "conv state (GiB)", "ssm_state_gib": "SSM state (GiB)", "kv_dtype": "KV dtype",
    "kv_tokens": "KV tokens", "k_gib": "K size (GiB)", "v_gib": "V size (GiB)",
    "max_total_num_tokens": "max_total_num_tokens", "max_running_requests": "max running requests",
    "context_len": "context length", "cuda_graph_gib": "CUDA graphs (GiB)", "avail_after_pools_gib": "free after pools (GiB)",
}


def print_parse(d: dict, console: Console | None = None) -> None:
    """`logs parse`: one column per rank (rank 0 first), then the failure."""
    c = console or Console()
    ranks = d.get("ranks") or {"": {k: v for k, v in d.items() if k != "ranks"}}
    t = Table(show_header=True, header_style="bold")
    t.add_column("quantity (measured)")
    for tag in ranks:
        t.add_column(tag or "value", justify="right")
    for key in KEYS:
        if key == "failure" or all(key not in r for r in ranks.values()):
            continue
        t.add_row(_LABELS[key], *[_cell(r.get(key)) for r in ranks.values()])
    c.print(t)
    if d.get("failure"):
        c.print(f"[bold red]failed[/] in phase [bold]{d['failure']['phase']}[/]: {escape(d['failure']['message'])}")


def print_check(d: dict, console: Console | None = None) -> None:
    """`logs check`: the proxies, then predicted vs observed with the rule that explains each difference."""
    c = console or Console()
    c.print(f"engine model sglang {d['engine']['version']}" + (f", log from sglang {d['log_version']}"
                                                              if d.get("log_version") else ""))
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
            t.add_row(r["quantity"], _cell(r["observed"]), _cell(r["predicted"]), r["rule"])
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
    if d.get("diagnosis"):
        _print_diagnosis(c, d["diagnosis"])
    c.print("[green]every difference is explained[/]" if d["explained"] else "[bold red]unexplained differences[/]")


def _print_diagnosis(c: Console, diag: dict) -> None:
    """The change `logs check` suggests, then the alternatives, each with the numbers it used."""
    for i, change in enumerate([diag, *diag.get("alternatives", [])]):
        head = "[bold]fix[/]" if i == 0 else "  or"
        flags = " ".join(change["flags"]) or (f"{change['knob']} (value needs P)" if change["knob"] else "none fits")
        c.print(f"{head} ({change['phase']}): [bold]{escape(flags)}[/]")
        c.print(f"    {change['why']}", markup=False)


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4f}".rstrip("0").rstrip(".") if abs(v) < 1e6 else f"{v:,.0f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def print_verify(d: dict, console: Console | None = None) -> None:
    """`verify`: each point's outcome (or, dry run, its command), then what was skipped and why."""
    c = console or Console()
    c.print(f"page {d['page']} on {d['gpu']}, workload {d['workload']}" +
            (f", sglang {d['engine']['version']} {d['engine']['commit']}".rstrip() if d.get("engine") else ""))
    points = d.get("points", [])
    if "engine" not in d:  # a dry run: the commands
        for n, p in enumerate(points, start=1):
            sweep = " ".join(f"{k[2:]}={v}" for k, v in p["sweep"].items())
            c.print(f"[bold]{n}.[/] {' '.join(f'{k}={v}' for k, v in p['selection'].items())} {sweep}")
            c.print("   " + " ".join(p["env"] + p["flags"]), soft_wrap=True, markup=False)
    else:
        t = Table(show_header=True, header_style="bold")
        for col in ("selection", "sweep", "outcome"):
            t.add_column(col)
        for p in points:
            why = f" ({p['failure']['phase']})" if p.get("failure") else ""
            t.add_row(" ".join(f"{k}={v}" for k, v in p["selection"].items()), p["sweep"], p["outcome"] + why)
        c.print(t)
    if d.get("already_recorded"):
        c.print(f"{len(d['already_recorded'])} points were already recorded (use --rerun to measure them again)")
    for s in d.get("skipped", []):
        c.print(f"skipped {' '.join(f'{k}={v}' for k, v in s['selection'].items())}: {s['reason']}", markup=False)
    c.print(f"results: {d['db']}  logs: {d['run_dir']}")


def _picks(selection: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in selection.items() if k not in ("variant", "nodes"))


def print_runs(d: dict, console: Console | None = None) -> None:
    """`results show`: one row per recorded point."""
    from hybridplan.verify.bench import summary

    runs = d["runs"]
    c = console or Console()
    t = Table(show_header=True, header_style="bold")
    for col in ("id", "build", "gpu", "page", "selection", "sweep", "outcome", "K", "KV tokens", "reqs", "TPOT ms",
                "accept"):
        t.add_column(col, justify="right" if col in ("id", "K", "KV tokens", "reqs", "TPOT ms", "accept") else "left")
    for r in runs:
        b, s = r["boot"], summary(r["bench"])
        outcome = r["outcome"] + (f" ({r['failure']['phase']})" if r.get("failure") else "")
        t.add_row(str(r["id"]), f"{r['engine_version']} {r['engine_commit'][:9]}".strip(), r["gpu"], r["page"],
                  _picks(r["selection"]), r["sweep"], outcome, _cell(b.get("max_mamba_cache_size")),
                  _cell(b.get("kv_tokens")), _cell(b.get("max_running_requests")), _cell(s.get("tpot_ms")),
                  _cell(s.get("accept_length")))
    c.print(t)
    c.print(f"{len(runs)} runs")


def print_diff(d: dict, console: Console | None = None) -> None:
    """`results diff`: per point, the fields that moved between the two builds."""
    c = console or Console()
    c.print(f"{d['a']} -> {d['b']}: {len(d['changed'])} points changed, {d['unchanged']} unchanged, "
            f"{len(d['only_a'])} only in {d['a']}, {len(d['only_b'])} only in {d['b']}")
    for ch in d["changed"]:
        c.print(f"[bold]{_picks(ch['selection'])}[/] {ch['sweep']} ({ch['gpu']})")
        for f in ch["fields"]:
            pct = f" ({f['change_pct']:+.2f}%)" if f["change_pct"] is not None else ""
            c.print(f"  {f['field']}: {_cell(f['a'])} -> {_cell(f['b'])}{pct}")
    for side in ("only_a", "only_b"):
        for u in d[side]:
            c.print(f"only in {d['a' if side == 'only_a' else 'b']}: {_picks(u['selection'])} {u['sweep']}",
                    markup=False)


def print_calibration(d: dict, console: Console | None = None) -> None:
    """`results calibrate`: per GPU, the planner's constants against the fitted ones, and the errors."""
    c = console or Console()
    for gpu_id, g in d["gpus"].items():
        ctx, head, err = g["context_gib"], g["headroom"], g["error"]
        c.print(f"[bold]{gpu_id}[/] ({g['runs']} runs)")
        for ranks in ("one_rank", "several_ranks"):
            if ctx["fitted"][ranks] is not None:
                c.print(f"  CUDA context, {ranks.replace('_', ' ')}: planner {ctx['planner'][ranks]:.2f} GiB, "
                        f"measured {ctx['fitted'][ranks]:.2f} GiB")
        lo, hi = head["interval_gib"]
        c.print(f"  headroom offset to the planner's estimate: {head['offset_gib']:+.2f} GiB "
                f"(bounds {'-' if lo is None else f'{lo:+.2f}'} .. {'-' if hi is None else f'{hi:+.2f}'}"
                + ("" if head["consistent"] else f", inconsistent: {head['bounds_broken']} bound(s) broken") + ")")
        t = Table(show_header=True, header_style="bold")
        for col in ("error", "before", "after"):
            t.add_column(col, justify="left" if col == "error" else "right")
        t.add_row("P, mean abs (GiB)", *(_cell(v) for v in err["pre_load_gib_mae"]))
        t.add_row("K, mean relative", *(_cell(v) for v in err["K_mean_rel"]))
        t.add_row("KV tokens, mean relative", *(_cell(v) for v in err["kv_tokens_mean_rel"]))
        t.add_row(f"fits / does not fit, wrong of {err['fits_judged']}", *(str(v) for v in err["fits_wrong"]))
        c.print(t)
    for s in d["skipped"]:
        c.print(f"skipped run {s['run']}: {s['reason']}", markup=False)
    c.print(d["note"], markup=False)
