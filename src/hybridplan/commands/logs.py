"""`hybridplan logs parse|check`: read an engine's boot log, and hold it against the engine model."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from hybridplan.commands.app import COMMAND_HELP, app, emit_json, launch_words, refuse_unused, run_guarded
from hybridplan.commands import options as opt

logs_app = typer.Typer(no_args_is_help=True, help="Engine boot logs: what the server allocated, and why.")
app.add_typer(logs_app, name="logs")


def read_log(path: Path) -> str:
    """The log's text, or a one-line BadInput (not a regular file, unreadable, or over the size bound: all checked
    before reading). Bytes that are not UTF-8 are replaced: logs mix encodings."""
    from hybridplan.limits import MAX_LOG_BYTES
    from hybridplan.textfile import read_bytes

    return read_bytes(path, limit=MAX_LOG_BYTES).decode(errors="replace")


@logs_app.command("parse")
def parse(
    log: Path = typer.Argument(..., help="The server's boot log (stdout/stderr of the server)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (rank 0; `ranks` when several)."),
    engine: str = typer.Option("sglang", "--engine", help="The engine that wrote the log: sglang or vllm."),
) -> None:
    """Pools, weights, graphs, caps and the failure phase, read off a boot log (GiB where the log says GB). Exit 1
    when the log lacks a line `logs check` needs (`missing`; a failure that ends the boot explains them), 2 when it
    holds none of the engine's lines (another engine's log is named)."""

    def body() -> int:
        from hybridplan.engine.api import for_engine, refuse_foreign_log

        eng = for_engine(engine)
        text = read_log(log)
        refuse_foreign_log(engine, text, str(log))
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
    engine: str = typer.Option("sglang", "--engine", help="The engine that wrote the log: sglang or vllm."),
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
        from hybridplan.engine.api import for_engine, refuse_foreign_log
        from hybridplan.engine.requests import LogCheckRequest

        eng = for_engine(engine)
        text = read_log(log)
        refuse_foreign_log(engine, text, str(log))
        req = LogCheckRequest(log=text, command=launch_words(command) or None, log_version=log_version,
                              engine_version=engine_version, gpu=gpu, expand_home=True)
        refuse_unused(engine, "logs", req, eng.takes("logs"))
        result = eng.check_log(req, name=str(log))
        if as_json:
            emit_json(result)
        else:
            from hybridplan.render.logs import show_check

            show_check(result, eng.layout)
        return 0 if result["explained"] else 1

    run_guarded(body, as_json)
