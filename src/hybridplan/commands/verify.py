"""`hybridplan verify`: boot and benchmark a cookbook page's selections on this machine's GPUs, and record them."""

from __future__ import annotations

import signal
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Optional

import typer

from hybridplan.commands.app import app, run_guarded
from hybridplan.commands import options as opt
from hybridplan.commands.app import emit_result

if TYPE_CHECKING:
    import threading

    from hybridplan.cookbook.schema import Page
    from hybridplan.verify.run import Point
    from hybridplan.verify.store import Run
    from hybridplan.verify.sweep import Sweep

PICKS = {"allow_extra_args": True, "ignore_unknown_options": True}
INTERRUPTED = 130


@app.command(context_settings=PICKS)
def verify(
    ctx: typer.Context,
    page_ref: str = typer.Argument(..., metavar="PAGE", help="A bundled page id or a page file."),
    sets: List[str] = typer.Option([], "--set", help="dim=option (repeatable); same as --<dim> option."),
    all_overlays: bool = typer.Option(False, "--all-overlays", help="Run every overlay combination the picks "
                                      "leave open (greyed ones are skipped with their reason)."),
    isl: int = typer.Option(..., "--isl", min=1, help="Benchmark input length (tokens)."),
    osl: int = typer.Option(..., "--osl", min=1, help="Benchmark output length (tokens)."),
    concurrency: int = typer.Option(..., "--concurrency", min=1, help="Benchmark max concurrency."),
    num_prompts: Optional[int] = typer.Option(None, "--num-prompts", min=1,
                                              help="Requests per benchmark (default max(2 x concurrency, 200))."),
    sweep: List[str] = typer.Option([], "--sweep", help="FLAG=START:STOP:STEP or FLAG=A,B (repeatable), e.g. "
                                    "mem-fraction-static=0.84:0.96:0.01."),
    launcher: Optional[str] = typer.Option(None, "--launcher", help="Command prefix the server (and benchmark) run "
                                           "under, e.g. 'docker run --rm --gpus all --network host IMAGE'."),
    bench_launcher: Optional[str] = typer.Option(None, "--bench-launcher", help="Prefix for the benchmark only "
                                                 "(default: --launcher)."),
    python: Optional[str] = typer.Option(None, "--python", help="Interpreter with sglang (default: this one, or "
                                         "`python` inside a --launcher)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address the server listens on."),
    port: int = typer.Option(30000, "--port", help="Port the server listens on."),
    boot_timeout: float = typer.Option(1800.0, "--boot-timeout", help="Seconds to wait for /health."),
    bench_timeout: float = typer.Option(7200.0, "--bench-timeout", help="Seconds the benchmark may take."),
    stop_grace: float = typer.Option(30.0, "--stop-grace", help="Seconds between SIGTERM and SIGKILL on stop."),
    engine_version: Optional[str] = typer.Option(None, "--engine-version", help="The build's version (default: "
                                                 "asked from the engine through the launcher)."),
    engine_commit: Optional[str] = typer.Option(None, "--engine-commit", help="The build's commit."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU id for the store (default: the page's hardware)."),
    db: Optional[Path] = typer.Option(None, "--db", help="Results database (default $HYBRIDPLAN_RESULTS or "
                                      "~/.cache/hybridplan/results.sqlite)."),
    run_dir: Optional[Path] = typer.Option(None, "--run-dir", help="Where server logs and bench output go."),
    rerun: bool = typer.Option(False, "--rerun", help="Measure points the store already has again."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the points and their commands; run nothing."),
    as_json: bool = opt.JSON,
) -> None:
    """Boot each selection with `python -m sglang.launch_server`, benchmark it with the page's bench_serving
    protocol, stop it, classify any failure by phase and record everything; a rerun resumes where it stopped.
    Exit 1 when a point did not serve."""

    def body() -> int:
        from hybridplan.commands.cookbook import picks_from_args
        from hybridplan.cookbook import load_page
        from hybridplan.verify import store as results
        from hybridplan.verify.bench import Workload, default_num_prompts
        from hybridplan.verify.launcher import Interrupted
        from hybridplan.verify.run import Build, Harness, plan_points, probe_build, run_points

        page = load_page(page_ref)
        picks = picks_from_args(page, list(ctx.args), sets)
        sweeps = _sweeps(sweep, page.engine_version)
        db_path = db or results.default_path()
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        harness = Harness(run_dir=run_dir or db_path.parent / "runs" / f"{page.id}-{stamp}", launcher=launcher,
                          bench_launcher=bench_launcher, python=python or ("python" if launcher else sys.executable),
                          host=host, port=port, boot_timeout_s=boot_timeout, bench_timeout_s=bench_timeout,
                          stop_grace_s=stop_grace)
        points, skipped = plan_points(page, picks, all_overlays=all_overlays, sweeps=sweeps, harness=harness)
        w = Workload(isl=isl, osl=osl, concurrency=concurrency,
                     num_prompts=num_prompts or default_num_prompts(concurrency))
        hw = picks.get("hw") or (points[0].selection["hw"] if points else None)
        gpu_id = gpu or _gpu_of(page, hw)
        out: dict[str, Any] = {"page": page.id, "gpu": gpu_id, "workload": w.as_dict(), "db": str(db_path),
                     "run_dir": str(harness.run_dir), "skipped": [s.as_dict() for s in skipped]}
        if dry_run:
            out["points"] = [{"selection": p.selection, "sweep": dict(p.sweep), "flags": list(p.flags),
                              "env": list(p.env)} for p in points]
            emit_result(out, as_json, "verify.print_verify")
            return 0
        build = (Build(version=engine_version, commit=engine_commit or "") if engine_version
                 else probe_build(harness))
        out["engine"] = {"version": build.version, "commit": build.commit}
        with results.Store(db_path) as store, _signals_set(harness.stop):
            try:
                progress = run_points(points, store=store, page_id=page.id, gpu=gpu_id, build=build, w=w, h=harness,
                                      bench_template=page.benchmark_commands.speed, rerun=rerun,
                                      on_point=None if as_json else _echo)
            except Interrupted:
                recorded = len(store.runs(page=page.id, gpu=gpu_id, build=build.version))
                sys.stderr.write(f"interrupted: {recorded} points of this build are recorded in {db_path}; "
                                 "run the same command again to resume\n")
                return INTERRUPTED
        out["points"] = progress.done
        out["already_recorded"] = progress.resumed
        emit_result(out, as_json, "verify.print_verify")
        return 0 if all(p["outcome"] == "serves" for p in progress.done) else 1

    run_guarded(body, as_json)


def _sweeps(specs: List[str], version: str) -> list[Sweep]:
    from hybridplan.engine.api import for_version
    from hybridplan.verify.sweep import parse_sweep

    if not specs:
        return []
    registry = for_version(version).registry()
    return [parse_sweep(s, set(registry.by_option)) for s in specs]


def _gpu_of(page: Page, hw: str | None) -> str:
    """The GPU catalog id behind the page's hardware choice (its own id when it names none)."""
    for h in page.hardware:
        if h.id == hw:
            return h.gpu or h.id
    return hw or "unknown"


class _signals_set:
    """While points run, SIGINT and SIGTERM only set `stop`; the run notices it between steps, stops the running
    server and raises Interrupted, so no signal lands in the middle of starting or stopping a server."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop

    def __enter__(self) -> _signals_set:
        self._old = {sig: signal.signal(sig, lambda *_: self.stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


def _echo(event: str, point: Point, run: Run | None) -> None:
    sweep = " ".join(f"{f[2:]}={v}" for f, v in point.sweep)
    sel = " ".join(f"{k}={v}" for k, v in point.selection.items())
    if event == "recorded":
        sys.stderr.write(f"  recorded already: {sel} {sweep}\n")
    elif event == "start":
        sys.stderr.write(f"  running: {sel} {sweep}\n")
    elif run is not None:  # "done"
        why = f" ({run.failure['phase']}: {run.failure['message'][:120]})" if run.failure else ""
        sys.stderr.write(f"    -> {run.outcome}{why}\n")


