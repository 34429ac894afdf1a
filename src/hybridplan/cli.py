"""The `hybridplan` command line: the app, shared error handling, and the command modules it registers.

Each command lives in `hybridplan/commands/<area>.py` and only parses options, calls the layers and prints.
Heavy modules are imported inside command bodies so the CLI starts fast.
"""

from __future__ import annotations

import json
import sys
from typing import Callable, List, Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="How SGLang lays out GPU memory for hybrid (state + KV) models, and launch commands that fit.")

COMMAND_HELP = "The launch command, after `--` (env assignments, program, flags)."


def emit_json(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


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


def command_tokens(command: Optional[List[str]]):
    """The launch command after `--`: a token list, or one quoted string."""
    from hybridplan.engine.command import parse_command
    from hybridplan.errors import BadInput

    if not command:
        raise BadInput("no launch command given; put it after `--`, e.g. "
                       "`hybridplan explain -- python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B`")
    text = command[0] if len(command) == 1 and " " in command[0] else list(command)
    return parse_command(text)


def main() -> None:
    app()


# command modules register themselves on `app`
from hybridplan.commands import explain as _explain  # noqa: E402,F401
from hybridplan.commands import models as _models  # noqa: E402,F401
from hybridplan.commands import serve as _serve  # noqa: E402,F401
from hybridplan.commands import cookbook as _cookbook  # noqa: E402,F401
from hybridplan.commands import logs as _logs  # noqa: E402,F401
from hybridplan.commands import ratio as _ratio  # noqa: E402,F401
from hybridplan.commands import plan as _plan  # noqa: E402,F401
from hybridplan.commands import check_engine as _check_engine  # noqa: E402,F401
from hybridplan.commands import verify as _verify  # noqa: E402,F401
from hybridplan.commands import results as _results  # noqa: E402,F401
