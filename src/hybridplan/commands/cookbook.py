"""`hybridplan cookbook`: deployment pages (list, render, matrix, check, export).

Pages define their own dimensions, so `render` takes picks generically: `--<dim> <option>` (the dim id in kebab case,
e.g. `--hw rtx5090 --quant nvfp4-fp4-head --ssm-dtype float32`) or `--set dim=option`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional

import typer

from hybridplan.commands.app import app, emit_json, run_guarded
from hybridplan.commands import options as opt

if TYPE_CHECKING:
    from hybridplan.cookbook.render import Delta
    from hybridplan.cookbook.schema import Page

cookbook_app = typer.Typer(no_args_is_help=True, help="Deployment pages: verified launch commands per model, "
                                                      "rendered and validated against the engine model.")
app.add_typer(cookbook_app, name="cookbook")

PICKS = {"allow_extra_args": True, "ignore_unknown_options": True}


def _pairs(values: List[str], what: str) -> dict[str, str]:
    from hybridplan.errors import BadInput

    out = {}
    for v in values:
        key, eq, value = v.partition("=")
        if not eq or not key:
            raise BadInput(f"{what} takes KEY=VALUE, got {v!r}")
        out[key] = value
    return out


def picks_from_args(page: Page, extra: List[str], sets: List[str]) -> dict[str, str]:
    """`--<dim> <option>` pairs (extra CLI args, dim ids in kebab case) and `--set dim=option`, checked against
    the page's dimensions and options."""
    from hybridplan.cookbook.selection import check_picks
    from hybridplan.errors import BadInput

    picks: dict[str, str] = {}
    i = 0
    while i < len(extra):
        tok = extra[i]
        if not tok.startswith("--") or len(tok) == 2:
            raise BadInput(f"unexpected argument {tok!r}; picks are --<dimension> <option>")
        name, eq, value = tok[2:].partition("=")
        if not eq:
            if i + 1 >= len(extra) or extra[i + 1].startswith("--"):
                raise BadInput(f"--{name} needs an option id")
            value = extra[i + 1]
            i += 1
        picks[name] = value
        i += 1
    picks.update(_pairs(sets, "--set"))
    return check_picks(page, picks)


@cookbook_app.command("list")
def list_pages(as_json: bool = opt.JSON) -> None:
    """The bundled pages: id, model, hardware, cells and how many selections are verified."""

    def body() -> int:
        from hybridplan.cookbook.matrix import listing

        out = listing()
        if as_json:
            emit_json(out)
        else:
            from hybridplan.render.cookbook import print_list

            print_list(out["pages"])
        return 0

    run_guarded(body, as_json)


def _delta(flags: List[str], env: List[str]) -> Delta | None:
    """Playground-style additions as a render Delta (None without any), each entry checked."""
    from hybridplan.cookbook.render import Delta
    from hybridplan.errors import BadInput

    for f in flags:
        if not f.startswith("--") or len(f.split()) > 2:
            raise BadInput(f"--add-flag takes '--flag' or '--flag value', got {f!r}")
    _pairs(env, "--add-env")
    return Delta(flags=tuple(flags), env=tuple(env)) if flags or env else None


@cookbook_app.command(context_settings=PICKS)
def render(
    ctx: typer.Context,
    page_ref: str = typer.Argument(..., metavar="PAGE", help="A bundled page id or a page file."),
    sets: List[str] = typer.Option([], "--set", help="dim=option (repeatable); same as --<dim> option."),
    docker: bool = typer.Option(False, "--docker", help="The docker run form instead of pip."),
    placeholder: List[str] = typer.Option([], "--placeholder", help="KEY=VALUE for a {{KEY}} placeholder."),
    no_ratio: bool = typer.Option(False, "--no-ratio", help="Leave the calculator's ratio out (the raw recipe)."),
    add_flag: List[str] = typer.Option([], "--add-flag", help="A playground flag ('--flag value', repeatable): "
                                       "replaces its family; gives the `effective` command."),
    add_env: List[str] = typer.Option([], "--add-env", help="A playground env entry KEY=VALUE (repeatable): "
                                      "rides with the effective command only."),
    engine_version: Optional[str] = opt.PAGE_ENGINE_VERSION,
    as_json: bool = opt.JSON,
) -> None:
    """The launch command for a selection: `--<dim> <option>` per dimension (e.g. --hw rtx5090 --spec dflash)."""

    def body() -> int:
        from hybridplan.calibration.sources import all_evidence
        from hybridplan.cookbook.pages import at_version, load_page
        from hybridplan.cookbook.render import render as run

        page = at_version(load_page(page_ref), engine_version)
        picks = picks_from_args(page, list(ctx.args), sets)
        out = run(page, picks, docker=docker, placeholders=_pairs(placeholder, "--placeholder"),
                  pin_ratio=not no_ratio, delta=_delta(add_flag, add_env), evidence=all_evidence)
        if as_json:
            emit_json(out.as_dict())
        else:
            from hybridplan.render.cookbook import print_rendered

            print_rendered(out)
        return 0

    run_guarded(body, as_json)


@cookbook_app.command()
def matrix(
    page_ref: str = typer.Argument(..., metavar="PAGE", help="A bundled page id or a page file."),
    docker: bool = typer.Option(False, "--docker", help="The docker run form instead of pip."),
    engine_version: Optional[str] = opt.PAGE_ENGINE_VERSION,
    as_json: bool = opt.JSON,
) -> None:
    """Every selection of a page: where it lands, its command, badge, warnings and greyed options with reasons."""

    def body() -> int:
        from hybridplan.cookbook.matrix import matrix as run
        from hybridplan.cookbook.pages import at_version, load_page

        out = run(at_version(load_page(page_ref), engine_version), docker=docker)
        if as_json:
            emit_json(out)
        else:
            from hybridplan.render.cookbook import print_matrix

            print_matrix(out)
        return 0

    run_guarded(body, as_json)


@cookbook_app.command()
def check(
    paths: Optional[List[str]] = typer.Argument(None, metavar="[PATH]...",
                                                help="Page files, folders or bundled page ids (default: every bundled page)."),
    docs: Optional[str] = typer.Option(None, "--docs", metavar="DIR", help="A docs tree: check every config "
                                       "module under DIR/src/snippets/configs/ (one line per page, totals)."),
    fmt: str = typer.Option("text", "--format", help="text, or github (GitHub Actions annotations with file and "
                                                     "line, for a docs CI job)."),
    engine_version: Optional[str] = opt.PAGE_ENGINE_VERSION,
    as_json: bool = opt.JSON,
) -> None:
    """Validate pages: schema, every selection renders, flags exist and are not duplicated, pins fit the engine
    model; every finding of every cell (a cell with an unknown flag is still sized without it). Docs config modules
    are imported in the Node sandbox first. Exit 0 clean, 1 findings, 2 unreadable input (with --docs, 1 for any
    error, an unreadable module included, and 0 when only warnings remain)."""

    def body() -> int:
        from hybridplan.cookbook.validate import check_paths, docs_modules
        from hybridplan.errors import BadInput

        if fmt not in ("text", "github"):
            raise BadInput(f"--format must be text or github, got {fmt!r}")
        todo = list(paths or []) + (docs_modules(docs) if docs else [])
        if docs and not todo:
            raise BadInput(f"--docs {docs}: no config modules under src/snippets/configs/")
        report = check_paths(todo, version=engine_version)
        report.docs = docs is not None
        if as_json:
            emit_json(report.as_dict())
        elif fmt == "github":
            from hybridplan.render.cookbook import print_github

            print_github(report, per_page=docs is not None)
        else:
            from hybridplan.render.cookbook import print_report

            print_report(report, per_page=docs is not None)
        return report.exit_code

    run_guarded(body, as_json)


@cookbook_app.command()
def export(
    page_ref: str = typer.Argument(..., metavar="PAGE", help="A bundled page id or a page file."),
    fmt: str = typer.Option("json", "--format", help="json (for a docs site), markdown (a matrix) or sglang-jsx "
                                                     "(a docs config module)."),
    out: Optional[str] = typer.Option(None, "--out", help="Write to this file instead of stdout."),
) -> None:
    """The page as generated JSON (selection space, cells, rules, rendered commands, badges), a Markdown matrix, or
    a docs config module (`--format sglang-jsx`) that can be dropped into docs/src/snippets/configs/."""

    def body() -> int:
        import json
        import sys

        from hybridplan.cookbook.docs.export import export_jsx
        from hybridplan.cookbook.export import export_json, export_markdown
        from hybridplan.cookbook.pages import load_page
        from hybridplan.errors import BadInput

        if fmt not in ("json", "markdown", "sglang-jsx"):
            raise BadInput(f"--format must be json, markdown or sglang-jsx, got {fmt!r}")
        page = load_page(page_ref)
        if fmt == "json" and out is None:
            emit_json(export_json(page))
            return 0
        text = (json.dumps(export_json(page), indent=2) + "\n" if fmt == "json"
                else export_markdown(page) if fmt == "markdown" else export_jsx(page))
        _write(text, out) if out else sys.stdout.write(text)
        return 0

    run_guarded(body, False)


def _write(text: str, path: str) -> None:
    from pathlib import Path

    from hybridplan.errors import BadInput

    try:
        Path(path).write_text(text)
    except OSError as exc:
        raise BadInput(f"--out {path}: cannot write: {exc.strerror or exc}") from None


@cookbook_app.command("import")
def import_(
    module: str = typer.Argument(..., metavar="FILE.jsx", help="A docs config module (configs/<Org>/<model>.jsx)."),
    out: Optional[str] = typer.Option(None, "--out", help="Write the page YAML here instead of stdout."),
    page_id: Optional[str] = typer.Option(None, "--id", help="The page id (default: from the model name)."),
    merge: Optional[str] = typer.Option(None, "--merge", metavar="PAGE.yaml", help="Regenerate this page: the "
                                        "module's data, the page's own additions (records, notes, workload...) kept."),
    origin: Optional[str] = typer.Option(None, "--from", metavar="REPO@COMMIT", help="Where the module came from "
                                         "(recorded in the page's source)."),
    workload: Optional[str] = typer.Option(None, "--workload", metavar="LENGTH,CONCURRENCY", help="The calculator "
                                           "workload the docs keep outside the module (request length, concurrency)."),
    as_json: bool = opt.JSON,
) -> None:
    """Read a docs cookbook config module (evaluated by Node.js in a sandbox) as a hybridplan page: every function
    recovered as conditions, then compared with the module on every selection. Exit 0 exact, 1 with findings
    (what cannot be expressed, listed), 2 unreadable."""

    def body() -> int:
        from hybridplan.cookbook.docs.importer import import_evaluation
        from hybridplan.cookbook.docs.node_eval import evaluate_file

        imp = import_evaluation(evaluate_file(module), page_id, merge=merge, origin=origin,
                                workload=_workload(workload))
        if out:
            _write(imp.yaml(), out)
        if as_json:
            emit_json({"page": imp.data, "exact": imp.exact, "findings": imp.findings, "notes": imp.notes,
                       "selections": imp.selections, "compared": imp.compared,
                       "ratio_divergences": imp.ratio_divergences, "out": out})
        else:
            from hybridplan.render.cookbook import print_import

            print_import(imp, yaml_to_stdout=not out)
        return 0 if imp.exact else 1

    run_guarded(body, as_json)


def _workload(text: Optional[str]) -> Optional[dict[str, Any]]:
    """`LENGTH,CONCURRENCY` as a page workload ({request_length, concurrency}), checked."""
    from hybridplan.errors import BadInput

    if text is None:
        return None
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() and int(p) >= 1 for p in parts):
        raise BadInput(f"--workload takes LENGTH,CONCURRENCY (positive integers), got {text!r}")
    return {"request_length": int(parts[0]), "concurrency": int(parts[1])}
