"""The `hybridplan` command line: the app (hybridplan.commands.app) with every command module registered on it.

Each command lives in `hybridplan/commands/<area>.py` and only parses options, calls the layers and prints.
Heavy modules are imported inside command bodies so the CLI starts fast.
"""

from __future__ import annotations

from hybridplan.commands.app import app

# command modules register themselves on `app`, in the order `--help` lists them
from hybridplan.commands import explain as _explain  # noqa: F401
from hybridplan.commands import models as _models  # noqa: F401
from hybridplan.commands import serve as _serve  # noqa: F401
from hybridplan.commands import cookbook as _cookbook  # noqa: F401
from hybridplan.commands import logs as _logs  # noqa: F401
from hybridplan.commands import ratio as _ratio  # noqa: F401
from hybridplan.commands import plan as _plan  # noqa: F401
from hybridplan.commands import check_engine as _check_engine  # noqa: F401
from hybridplan.commands import verify as _verify  # noqa: F401
from hybridplan.commands import results as _results  # noqa: F401

__all__ = ["app", "main"]


def main() -> None:
    app()
