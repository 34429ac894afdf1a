"""`hybridplan logs parse|check`: read an SGLang boot log, and hold it against the engine model."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Optional

import typer

from hybridplan.commands.app import COMMAND_HELP, app, command_tokens, emit_json, run_guarded
from hybridplan.commands import options as opt

if TYPE_CHECKING:
    from hybridplan.verify.logparse import BootLog

logs_app = typer.Typer(no_args_is_help=True, help="SGLang boot logs: what the server allocated, and why.")
app.add_typer(logs_app, name="logs")


def emit_result(result: dict[str, Any], as_json: bool, printer: str) -> None:
    """`--json`: the dict itself; otherwise the printer `module.function` of hybridplan.render (imported only here)."""
    if as_json:
        emit_json(result)
        return
    from importlib import import_module

    module, _, name = printer.rpartition(".")
    getattr(import_module(f"hybridplan.render.{module}"), name)(result)


def read_log(path: Path) -> BootLog:
    """The parsed log, or a one-line BadInput (not a regular file, unreadable, or over the size bound: all checked
    before reading). Bytes that are not UTF-8 are replaced: logs mix encodings."""
    from hybridplan.textfile import read_bytes
    from hybridplan.verify.logparse import MAX_LOG_BYTES, parse_log

    data = read_bytes(path, limit=MAX_LOG_BYTES)
    return parse_log(data.decode(errors="replace"), name=str(path))


@logs_app.command("parse")
def parse(
    log: Path = typer.Argument(..., help="The server's boot log (stdout/stderr of launch_server)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (rank 0; `ranks` when several)."),
) -> None:
    """Pools, weights, graphs, caps and the failure phase, read off a boot log (GiB where the log says GB)."""

    def body() -> int:
        emit_result(read_log(log).as_dict(), as_json, "logs.print_parse")
        return 0

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
    the log states > 0.5.23). Exit 1 when a difference stays unexplained. `--engine vllm`: the hybrid block size,
    KV capacity and concurrency from the logged available KV memory (the launch: the log's non-default args line,
    or the command after `--`)."""

    def body() -> int:
        if engine == "vllm":
            return _check_vllm(log, command, engine_version, gpu, as_json)
        from hybridplan.verify.check import check_log

        boot = read_log(log)
        result = check_log(boot, command_tokens(command), log_version=log_version, version=engine_version)
        emit_result(result, as_json, "logs.print_check")
        return 0 if result["explained"] else 1

    run_guarded(body, as_json)


def _check_vllm(log: Path, command: Optional[List[str]], version: Optional[str], gpu: Optional[str],
                as_json: bool) -> int:
    """`logs check --engine vllm`: exit 1 when a logged number is not predicted."""
    import shlex

    from hybridplan.textfile import read_bytes
    from hybridplan.verify.logparse import MAX_LOG_BYTES
    from hybridplan.verify.vllm_check import check_vllm_log

    text = read_bytes(log, limit=MAX_LOG_BYTES).decode(errors="replace")
    launch = (command[0] if len(command) == 1 else shlex.join(command)) if command else None
    result = check_vllm_log(text, launch, gpu=gpu, version=version)
    emit_result(result, as_json, "vllm.print_vllm_check")
    return 0 if result["explained"] else 1
