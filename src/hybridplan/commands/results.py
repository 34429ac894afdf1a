"""`hybridplan results show|diff|export|calibrate`: the measurements `verify` recorded."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from hybridplan.commands.app import app, emit_json, run_guarded
from hybridplan.commands import options as opt
from hybridplan.commands.app import emit_result

if TYPE_CHECKING:
    from hybridplan.verify.store import Store

results_app = typer.Typer(no_args_is_help=True, help="Measurements recorded by `verify` (SQLite).")
app.add_typer(results_app, name="results")

# the filters every subcommand takes (typer reads these option declarations; they hold no state)
DB = typer.Option(None, "--db", help="Results database (default $HYBRIDPLAN_RESULTS or "
                  "~/.cache/hybridplan/results.sqlite).")
PAGE = typer.Option(None, "--page", help="Only this page.")
GPU = typer.Option(None, "--gpu", help="Only this GPU.")
BUILD = typer.Option(None, "--build", help="Only this engine version or commit (prefix).")
JSON = opt.JSON


def _open(db: Optional[Path]) -> Store:
    from hybridplan.errors import BadInput
    from hybridplan.verify.store import Store, default_path

    path = db or default_path()
    if not path.exists():
        raise BadInput(f"no results database at {path} (run `hybridplan verify` first, or give --db)")
    return Store(path)


@results_app.command("show")
def show(
    db: Optional[Path] = DB,
    page: Optional[str] = PAGE,
    gpu: Optional[str] = GPU,
    build: Optional[str] = BUILD,
    logs: bool = typer.Option(False, "--logs", help="Include the server logs and bench output (JSON)."),
    as_json: bool = opt.JSON,
) -> None:
    """Every recorded point: build, GPU, selection, sweep value, outcome and failure phase, pools and TPOT."""

    def body() -> int:
        with _open(db) as store:
            runs = [r.as_dict(with_logs=logs) for r in store.runs(page=page, gpu=gpu, build=build)]
        emit_result({"runs": runs}, as_json, "verify.print_runs")
        return 0

    run_guarded(body, as_json)


@results_app.command("diff")
def diff(
    build_a: str = typer.Argument(..., metavar="BUILD_A", help="Engine version or commit (prefix)."),
    build_b: str = typer.Argument(..., metavar="BUILD_B", help="Engine version or commit (prefix)."),
    db: Optional[Path] = DB,
    page: Optional[str] = PAGE,
    gpu: Optional[str] = GPU,
    as_json: bool = opt.JSON,
) -> None:
    """What changed between two builds on the same points (outcome, K, KV tokens, requests, TPOT, accept length)."""

    def body() -> int:
        from hybridplan.errors import BadInput
        from hybridplan.verify.diff import diff_runs

        with _open(db) as store:
            a = store.runs(page=page, gpu=gpu, build=build_a)
            b = store.runs(page=page, gpu=gpu, build=build_b)
            builds = store.builds()
        for name, runs in ((build_a, a), (build_b, b)):
            if not runs:
                known = ", ".join(f"{v} {c}".strip() for v, c in builds) or "none"
                raise BadInput(f"no recorded runs for build {name!r}; recorded builds: {known}")
        emit_result({"a": build_a, "b": build_b, **diff_runs(a, b)}, as_json, "verify.print_diff")
        return 0

    run_guarded(body, as_json)


@results_app.command("export")
def export(
    page_ref: str = typer.Argument(..., metavar="PAGE", help="A bundled page id or a page file."),
    page_file: Optional[Path] = typer.Option(None, "--page-file", help="The YAML file to write into (default: the "
                                             "page's own file)."),
    db: Optional[Path] = DB,
    gpu: Optional[str] = GPU,
    build: Optional[str] = BUILD,
    write: bool = typer.Option(False, "--write", help="Write the file; without it the patch is printed."),
    as_json: bool = opt.JSON,
) -> None:
    """Measurement records (outcome, KV tokens, K, max running requests, TPOT, accept length) for each run, into
    the cells of the page file they were measured on: a unified diff, or the file itself with --write."""

    def body() -> int:
        from hybridplan.cookbook.pages import bundled_ids, bundled_path, load_page
        from hybridplan.errors import BadInput
        from hybridplan.verify.export import export_runs, unified_patch

        page = load_page(page_ref)
        path = page_file or (Path(str(bundled_path(page_ref))) if page_ref in bundled_ids() else Path(page_ref))
        with _open(db) as store:
            runs = store.runs(page=page.id, gpu=gpu, build=build)
        if not runs:
            raise BadInput(f"no recorded runs for page {page.id}" + (f" on {gpu}" if gpu else "")
                           + (f" of build {build}" if build else ""))
        old, new, count = export_runs(path, runs, page)
        patch = unified_patch(old, new, path)
        if write:
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(new)
            tmp.replace(path)  # atomic: a reader sees the old page or the new one
        if as_json:
            emit_json({"page": page.id, "file": str(path), "records": count, "written": write, "patch": patch})
        elif write:
            sys.stdout.write(f"wrote {count} measurement records into {path}\n")
        else:
            sys.stdout.write(patch)
        return 0

    run_guarded(body, as_json)


@results_app.command("calibrate")
def calibrate(
    db: Optional[Path] = DB,
    page: Optional[str] = PAGE,
    gpu: Optional[str] = GPU,
    build: Optional[str] = BUILD,
    as_json: bool = opt.JSON,
) -> None:
    """Fit the planner's per-GPU estimates (CUDA context before the weights, graph + activation headroom) to the
    recorded runs, and show the planner's error before and after."""

    def body() -> int:
        from hybridplan.errors import BadInput
        from hybridplan.calibration.calibrate import calibrate as fit

        with _open(db) as store:
            runs = store.runs(page=page, gpu=gpu, build=build)
        if not runs:
            raise BadInput("no recorded runs to calibrate with")
        emit_result(fit(runs), as_json, "verify.print_calibration")
        return 0

    run_guarded(body, as_json)
