"""The `hybridplan` command line: the app (hybridplan.commands.app) with every command module registered on it.

Each command lives in `hybridplan/commands/<area>.py` and only parses options, calls the layers and prints; importing
the module registers its command (or command group) on `app`. COMMANDS names each one and its module, in the order
`--help` lists them: a new command module is one line there (tests/test_import_graph.py checks the names).
`main` imports only the module of the command it runs; `--help`, a bare `hybridplan` or an unknown command import them
all, so the listing and the "no such command" suggestions are the same as ever. `hybridplan.cli.app` is the app with
every command registered. Heavy modules are imported inside command bodies so the CLI starts fast.
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Any

# (command or group name, the module that registers it), in the order `--help` lists them
COMMANDS = (
    ("explain", "hybridplan.commands.explain"),
    ("models", "hybridplan.commands.models"),
    ("serve", "hybridplan.commands.serve"),
    ("cookbook", "hybridplan.commands.cookbook"),
    ("logs", "hybridplan.commands.logs"),
    ("ratio", "hybridplan.commands.ratio"),
    ("plan", "hybridplan.commands.plan"),
    ("compare", "hybridplan.commands.compare"),
    ("fleet", "hybridplan.commands.fleet"),
    ("guard", "hybridplan.commands.guard"),
    ("check-engine", "hybridplan.commands.check_engine"),
    ("verify", "hybridplan.commands.verify"),
    ("results", "hybridplan.commands.results"),
)

__all__ = ["COMMANDS", "app", "main"]  # noqa: F822 - `app` comes from __getattr__ below


def load(argv: list[str] | None = None) -> Any:
    """The app with the command `argv` names registered (`argv[0]`, a command name), or with every command."""
    first = argv[0] if argv else None
    wanted = [module for name, module in COMMANDS if name == first] or [module for _, module in COMMANDS]
    for module in wanted:
        import_module(module)
    return import_module("hybridplan.commands.app").app


def __getattr__(name: str) -> Any:
    """`hybridplan.cli.app`: the app with every command registered."""
    if name == "app":
        return load()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    from typer.main import get_group

    # always the group: with one command registered, typer would make that command the whole program
    get_group(load(sys.argv[1:2]))()
