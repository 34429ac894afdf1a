"""`verify` and `results show|diff|calibrate` as rich tables; the same dicts are the --json output."""

from __future__ import annotations


from typing import Any

from rich.console import Console
from rich.table import Table

from hybridplan.render.format import cell


def print_verify(d: dict[str, Any], console: Console | None = None) -> None:
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


def _picks(selection: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in selection.items() if k not in ("variant", "nodes"))


def print_runs(d: dict[str, Any], console: Console | None = None) -> None:
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
                  _picks(r["selection"]), r["sweep"], outcome, cell(b.get("max_mamba_cache_size")),
                  cell(b.get("kv_tokens")), cell(b.get("max_running_requests")), cell(s.get("tpot_ms")),
                  cell(s.get("accept_length")))
    c.print(t)
    c.print(f"{len(runs)} runs")


def print_diff(d: dict[str, Any], console: Console | None = None) -> None:
    """`results diff`: per point, the fields that moved between the two builds."""
    c = console or Console()
    c.print(f"{d['a']} -> {d['b']}: {len(d['changed'])} points changed, {d['unchanged']} unchanged, "
            f"{len(d['only_a'])} only in {d['a']}, {len(d['only_b'])} only in {d['b']}")
    for ch in d["changed"]:
        c.print(f"[bold]{_picks(ch['selection'])}[/] {ch['sweep']} ({ch['gpu']})")
        for f in ch["fields"]:
            pct = f" ({f['change_pct']:+.2f}%)" if f["change_pct"] is not None else ""
            c.print(f"  {f['field']}: {cell(f['a'])} -> {cell(f['b'])}{pct}")
    for side in ("only_a", "only_b"):
        for u in d[side]:
            c.print(f"only in {d['a' if side == 'only_a' else 'b']}: {_picks(u['selection'])} {u['sweep']}",
                    markup=False)


def print_calibration(d: dict[str, Any], console: Console | None = None) -> None:
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
        t.add_row("P, mean abs (GiB)", *(cell(v) for v in err["pre_load_gib_mae"]))
        t.add_row("K, mean relative", *(cell(v) for v in err["K_mean_rel"]))
        t.add_row("KV tokens, mean relative", *(cell(v) for v in err["kv_tokens_mean_rel"]))
        t.add_row(f"fits / does not fit, wrong of {err['fits_judged']}", *(str(v) for v in err["fits_wrong"]))
        c.print(t)
    for s in d["skipped"]:
        c.print(f"skipped run {s['run']}: {s['reason']}", markup=False)
    c.print(d["note"], markup=False)
