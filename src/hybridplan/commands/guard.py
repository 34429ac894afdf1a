"""`hybridplan guard`: the verdict on a launch before the engine starts; the launch runs (exec: the same process, so
argv, env, stdio, signals and the exit code are the engine's) only when the verdict says it serves."""

from __future__ import annotations

import os
import signal
import sys
from typing import List, Optional

import typer

from hybridplan.commands import options as opt
from hybridplan.commands.app import app, run_guarded

ON_UNKNOWN = ("refuse", "exec")
EXIT_FAILS = 3  # the engine would refuse to start or fail (README's exit codes)
EXIT_UNKNOWN = 4  # no verdict, and --on-unknown refuse


def _on_unknown(value: str) -> str:
    if value not in ON_UNKNOWN:
        raise typer.BadParameter(f"must be one of {', '.join(ON_UNKNOWN)}, got {value!r}")
    return value


def run(env: tuple[tuple[str, str], ...], argv: tuple[str, ...]) -> int:
    """Replace this process with the launch (its assignments over this environment, as a shell runs them); only
    returns when the program cannot be run: 127 not found, 126 not runnable, as a shell exits."""
    sys.stdout.flush()
    sys.stderr.flush()
    for name in ("SIGPIPE", "SIGXFSZ"):  # Python ignores them; the engine gets the default a shell would give it
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        os.execvpe(argv[0], list(argv), {**os.environ, **dict(env)})
    except OSError as exc:
        sys.stderr.write(f"error: guard: cannot run {argv[0]!r}: {exc.strerror or exc}\n")
        return 127 if isinstance(exc, FileNotFoundError) else 126
    return 126  # pragma: no cover - execvpe returns only by raising


@app.command(context_settings={"allow_interspersed_args": False})
def guard(
    command: Optional[List[str]] = typer.Argument(None, help="After `--`: the launch, as the container runs it "
                                                  "(NAME=value assignments, then the program and its arguments)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="A GPU from the catalog, or `detect` (the default "
                                      "without --gpu-memory-gib): read the card from nvidia-smi."),
    gpu_memory_gib: Optional[float] = opt.GPU_MEMORY_GIB,
    engine: str = opt.ENGINE,
    engine_version: Optional[str] = opt.ENGINE_VERSION,
    fix: bool = typer.Option(False, "--fix", help="When the launch fails, run the planner's fewest-change launch "
                             "instead (if the verdict on it serves); the changes go to stderr."),
    request_length: Optional[int] = typer.Option(None, "--request-length", "-L", callback=opt.LENGTH_CHECK,
                                                 help="The fix's request length (default: the launch's context "
                                                 "length)."),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", "-C", callback=opt.REQUESTS_CHECK,
                                              help="The fix's concurrent requests (default: the launch's request "
                                              "cap, else 1)."),
    on_unknown: str = typer.Option("refuse", "--on-unknown", callback=_on_unknown,
                                   help="Without a verdict (the engine model cannot judge the launch): refuse (exit "
                                   "4) or exec it."),
) -> None:
    """Run a launch only if it will serve: the verdict on the exact command on the card, then exec it unchanged, or
    stop before the engine starts with the verdict, its phase, evidence and fix (exit 3)."""

    def body() -> int:
        from hybridplan.api.preflight import preflight
        from hybridplan.render.guard import show_guard

        decided = preflight(tuple(command or ()), gpu=gpu, gpu_memory_gib=gpu_memory_gib, engine=engine,
                            engine_version=engine_version, fix=fix, request_length=request_length,
                            concurrency=concurrency)
        launch = decided.launch if decided.outcome == "serves" else \
            decided.given if decided.outcome == "unknown" and on_unknown == "exec" else None
        show_guard(decided.as_dict(), launch is not None, on_unknown, fix)
        if launch is None:
            return EXIT_FAILS if decided.outcome == "fails" else EXIT_UNKNOWN
        return run(launch.env, launch.argv)

    run_guarded(body, False)
