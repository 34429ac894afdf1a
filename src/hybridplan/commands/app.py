"""The typer app every command registers on, and the helpers the command modules share (errors, JSON, the
launch command after `--`). `hybridplan.cli` imports the command modules; they import only this module.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, List, Optional, Sequence

import typer
from typer.core import TyperGroup

from hybridplan.commands.coercion import install as install_plain_coercion

try:  # typer >= 0.20 vendors click
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - older typer runs on click itself
    from click import exceptions as click_errors  # type: ignore[no-redef]


def _wants_json(argv: Sequence[str]) -> bool:
    """`--json` among hybridplan's own arguments (before a `--` launch command)."""
    own = list(argv)[:list(argv).index("--")] if "--" in argv else list(argv)
    return "--json" in own


def report_usage_error(exc: click_errors.ClickException, as_json: bool) -> None:
    """A usage error (unknown option, missing argument, bad value) as one line, or an `error` object under --json."""
    message = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    where = f"{ctx.command_path}: " if ctx is not None else ""
    if as_json:
        emit_json({"error": {"message": where + message, "type": "UsageError"}})
    else:
        sys.stderr.write(f"error: {where}{message}\n")


class _Group(TyperGroup):
    """The root command: usage errors become one line on stderr (a JSON `error` object on stdout under --json), exit 2."""

    def main(self, args: Optional[Sequence[str]] = None, prog_name: Optional[str] = None,
             complete_var: Optional[str] = None, standalone_mode: bool = True, windows_expand_args: bool = True,
             **extra: Any) -> Any:
        argv = sys.argv[1:] if args is None else list(args)
        install_plain_coercion(self)
        try:
            code = super().main(args=argv, prog_name=prog_name, complete_var=complete_var, standalone_mode=False,
                                windows_expand_args=windows_expand_args, **extra)
        except click_errors.ClickException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # `hybridplan` or a group alone: its help
                exc.show()
            else:
                report_usage_error(exc, _wants_json(argv))
            code = exc.exit_code
        except typer.Abort:
            sys.stderr.write("Aborted!\n")
            code = 1
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(cls=_Group, add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="How SGLang lays out GPU memory for hybrid (state + KV) models, and launch commands that fit.")

COMMAND_HELP = "The launch command, after `--` (env assignments, program, flags)."


def emit_json(obj: dict[str, Any]) -> None:
    """One JSON object on stdout; a NaN or infinity in it is a one-line error naming its field (jsontext.dumps)."""
    from hybridplan.jsontext import dumps

    emit_text(dumps(obj, indent=2))


def emit_text(text: str) -> None:
    """One answer on stdout (a result's `to_json()`)."""
    sys.stdout.write(text + "\n")


def run_guarded(fn: Callable[[], Optional[int]], as_json: bool) -> None:
    """Run a command body; known errors become one line on stderr (or an `error` object) and an exit code.

    Exit codes: 0 ok, 1 findings, 2 bad input, 3 the engine would refuse to start.
    """
    from hybridplan.errors import EngineRefusal, HybridPlanError

    try:
        code = fn() or 0
    except EngineRefusal as exc:
        if as_json:
            emit_json({"error": exc.as_dict()})
        else:
            sys.stderr.write(f"engine refuses to start: {exc.message}\n  (rule: {exc.rule})\n")
        raise typer.Exit(exc.exit_code) from None
    except HybridPlanError as exc:
        if as_json:
            emit_json({"error": {"message": exc.message, "type": type(exc).__name__}})
        else:
            sys.stderr.write(f"error: {exc.message}\n")
        raise typer.Exit(exc.exit_code) from None
    raise typer.Exit(code)


def launch_words(command: Optional[List[str]]) -> str | tuple[str, ...]:
    """The launch command after `--` as the engines take it: one quoted string as typed, else the shell's tokens
    ("" when none was given: the engine names what it needs)."""
    if not command:
        return ""
    return command[0] if len(command) == 1 and " " in command[0] else tuple(command)


def flag_name(field: str) -> str:
    """A request field as the CLI spells it (what a refusal of an option the engine does not take names)."""
    spelled = {"command": "the launch after `--`", "request_length": "--request-length",
               "concurrency": "--concurrency"}
    return spelled.get(field, "--" + field.replace("_", "-"))


def emit_result(result: dict[str, Any], as_json: bool, printer: str) -> None:
    """`--json`: the dict itself; otherwise the printer `module.function` of hybridplan.render (imported only here)."""
    if as_json:
        emit_json(result)
        return
    from importlib import import_module

    module, _, name = printer.rpartition(".")
    getattr(import_module(f"hybridplan.render.{module}"), name)(result)
