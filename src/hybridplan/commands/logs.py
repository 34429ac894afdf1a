"""`hybridplan logs parse|check`: read an engine's boot log, and hold it against the engine model."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from hybridplan.commands.app import COMMAND_HELP, app, emit_json, emit_text, flag_name, launch_words, run_guarded
from hybridplan.commands import options as opt

logs_app = typer.Typer(no_args_is_help=True, help="Engine boot logs: what the server allocated, and why.")
app.add_typer(logs_app, name="logs")


@logs_app.command("parse")
def parse(
    log: Path = typer.Argument(..., help="The server's boot log (stdout/stderr of the server)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (rank 0; `ranks` when several)."),
    engine: Optional[str] = typer.Option(None, "--engine", help="The engine that wrote the log: sglang or vllm "
                                         "(default: the one whose boot-log lines it holds)."),
) -> None:
    """Pools, weights, graphs, caps and the failure phase, read off a boot log (GiB where the log says GB). Exit 1
    when the log lacks a line `logs check` needs (`missing`; a failure that ends the boot explains them), 2 when it
    holds none of the engine's lines (another engine's log is named)."""

    def body() -> int:
        from hybridplan.api.calls import read_log
        from hybridplan.engine.api import for_engine, refuse_foreign_log, written_by

        text = read_log(log)
        eng = for_engine(written_by(text, engine))
        refuse_foreign_log(eng.name, text, str(log))
        result = eng.parse_log(text, name=str(log))
        if as_json:
            emit_json(result)
        else:
            from hybridplan.render.logs import show_parse

            show_parse(result, eng.layout)
        return 1 if result["missing"] else 0

    run_guarded(body, as_json)


@logs_app.command("check")
def check(
    log: Path = typer.Argument(..., help="The server's boot log."),
    command: Optional[List[str]] = typer.Argument(None, help=COMMAND_HELP),
    log_version: Optional[str] = typer.Option(None, "--log-version", help="The sglang build that wrote the log "
                                              "(e.g. 0.5.19, lmsysorg/sglang:v0.5.19): a modelled release is "
                                              "checked by its own rules; overrides what the log states."),
    engine_version: Optional[str] = opt.ENGINE_VERSION,
    as_json: bool = opt.JSON,
    engine: Optional[str] = typer.Option(None, "--engine", help="The engine that wrote the log: sglang or vllm "
                                         "(default: the one whose boot-log lines it holds)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="vLLM: the card the log is from (its compute capability "
                                      "picks the GDN prefill kernel); default an sm90 card."),
) -> None:
    """Predicted vs observed K, KV tokens, state and KV GiB and max running requests, with the rule that explains
    each difference, by the rules of the release the log is from (--engine-version > --log-version > the version
    the log states > 0.5.23). Exit 1 when a difference stays unexplained or nothing could be compared (`missing`
    names the lines the log lacks, `failure` where it stopped), 2 when the log holds none of the engine's lines.
    `--engine vllm`: the hybrid block size, KV capacity and concurrency from the logged available KV memory (the
    launch: the log's non-default args line, or the command after `--`)."""

    def body() -> int:
        from hybridplan.api.calls import read_log, run_check_log
        from hybridplan.engine.requests import LogCheckRequest

        result = run_check_log(LogCheckRequest(log=read_log(log), command=launch_words(command) or None,
                                               log_version=log_version, engine_version=engine_version, gpu=gpu,
                                               expand_home=True), engine, name=str(log), spell=flag_name)
        if as_json:
            emit_text(result.to_json())
        else:
            from hybridplan.engine.api import for_engine
            from hybridplan.render.logs import show_check

            show_check(result.payload, for_engine(result.engine).layout)
        return result.exit_code

    run_guarded(body, as_json)
