"""`verify`: render a page's selections, boot each one for real, benchmark it, classify what failed, and record it.

One point = one selection (x one combination of swept flag values): launch `python -m sglang.launch_server` with the
rendered flags (host and port are the harness's), wait for /health, run the page's bench_serving protocol, stop the
server's process group, then parse the log, hold it against the engine model (`logs check`) and store the run.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from hybridplan.errors import BadInput, HybridPlanError
from hybridplan.verify.bench import Workload, bench_argv, parse_bench
from hybridplan.engine.api import Failure
from hybridplan.verify.launcher import Interrupted, ServerProcess, port_free, run_to_end, wrapped
from hybridplan.engine.api import BootLog, parse_log
from hybridplan.verify.store import Run, RunKey, Store
from hybridplan.verify.sweep import Sweep, combinations, label

if TYPE_CHECKING:
    from hybridplan.cookbook.schema import Page

SERVER_MODULE = ("-m", "sglang.launch_server")
_KILLED_RC = (-9, 137)
_ENDPOINT_FLAGS = ("--host", "--port")


@dataclass(frozen=True, kw_only=True)
class Harness:
    """How points are run: the wrapper, the interpreter, where the server listens, how long to wait."""

    run_dir: Path
    launcher: str | None = None
    bench_launcher: str | None = None  # None: the server's launcher
    python: str = "python"
    host: str = "127.0.0.1"
    port: int = 30000
    boot_timeout_s: float = 1800.0
    bench_timeout_s: float = 7200.0
    stop_grace_s: float = 30.0
    stop: threading.Event = field(default_factory=threading.Event, compare=False)  # set by SIGINT/SIGTERM

    @property
    def health_url(self) -> str:
        return f"http://{self.host}:{self.port}/health"


@dataclass(frozen=True, kw_only=True)
class Build:
    """The engine build the server runs: its version string and, when known, the commit."""

    version: str
    commit: str = ""


@dataclass(frozen=True, kw_only=True)
class Point:
    """One thing to measure: a rendered selection with the swept values applied."""

    selection: dict[str, str]
    cell: dict[str, Any] | None
    sweep: tuple[tuple[str, str], ...]
    flags: tuple[str, ...]  # as rendered, host and port the harness's
    env: tuple[str, ...]

    @property
    def key_flags(self) -> tuple[str, ...]:
        """The flags that define the measurement (the harness's --host/--port left out)."""
        return tuple(f for f in self.flags if f.split()[0].split("=")[0] not in _ENDPOINT_FLAGS)


@dataclass(frozen=True, kw_only=True)
class Skipped:
    selection: dict[str, str]
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"selection": self.selection, "reason": self.reason}


def plan_points(page: Page, picks: dict[str, str], *, all_overlays: bool, sweeps: list[Sweep],
                harness: Harness) -> tuple[list[Point], list[Skipped]]:
    """Every selection to run (all overlay combinations the picks leave open, with --all-overlays) x every sweep
    combination. Selections the page greys out (a reseated pick, no cell, a redirect) are skipped with the reason."""
    from hybridplan.cookbook.render import Delta, render

    open_dims = [d for d in page.overlay_dims if d.id not in picks] if all_overlays else []
    placeholders = {"HOST_IP": harness.host, "PORT": str(harness.port)}
    points: list[Point] = []
    skipped: list[Skipped] = []
    for combo in product(*([o.id for o in d.options] for d in open_dims)):
        wanted = {**picks, **dict(zip((d.id for d in open_dims), combo))}
        base = render(page, wanted, placeholders=placeholders)
        if base.reseated:
            skipped.append(Skipped(selection=wanted, reason="; ".join(
                f"{r.dim}={r.from_}: {r.reason}" for r in base.reseated)))
            continue
        if base.cell is None or base.redirect:
            skipped.append(Skipped(selection=wanted, reason="no command for this selection" if base.cell is None
                                   else "the cell redirects elsewhere"))
            continue
        for values in combinations(sweeps):
            r = base if not values else render(page, wanted, placeholders=placeholders,
                                               delta=Delta(flags=tuple(f"{f} {v}" for f, v in values)))
            eff = r.effective or {"flags": list(r.flags), "env": list(r.env)}
            points.append(Point(selection=dict(r.selection), cell=r.cell, sweep=values, flags=tuple(eff["flags"]),
                                env=tuple(eff["env"])))
    return points, skipped


_VERSION = re.compile(r"^\s*(\d+\.\d+\.\d+\S*)\s*$", re.MULTILINE)
_COMMIT = re.compile(r"\+g([0-9a-f]{7,40})\b")


def probe_build(harness: Harness) -> Build:
    """Ask the engine the launcher runs for its version (`import sglang; sglang.__version__`); a dev build's
    version carries its commit (`0.0.0.dev11582+g4df60434d`)."""
    launch = wrapped(["-c", "import sglang; print(sglang.__version__)"], {}, launcher=harness.launcher,
                     python=harness.python)
    fin = run_to_end(launch, timeout_s=300)
    m = _VERSION.search(fin.output) if fin.returncode == 0 else None
    if m is None:
        raise BadInput(f"could not read the engine version through `{launch.text()}`"
                       f" (exit {fin.returncode}); pass --engine-version (and --engine-commit)")
    c = _COMMIT.search(m.group(1))
    return Build(version=m.group(1), commit=c.group(1) if c else "")


def _env_pairs(env: tuple[str, ...]) -> dict[str, str]:
    return dict(e.split("=", 1) for e in env if "=" in e)


def _outcome(state: str, server_rc: int | None, boot: BootLog, bench: dict[str, Any] | None, bench_rc: int | None,
             bench_output: str | None, w: Workload, h: Harness) -> tuple[str, Failure | None]:
    """serves | boot-failure | runtime-oom | degraded, and the failure with its phase."""
    logged = boot.rank0.failure
    if state != "ready":
        if logged is not None:
            return "boot-failure", logged
        if state == "timeout":
            return "boot-failure", Failure(phase="timeout", message=(
                f"/health did not answer within {h.boot_timeout_s:g} s; the server was stopped"))
        if server_rc in _KILLED_RC:
            return "boot-failure", Failure(phase="killed", message=f"the server was killed (exit {server_rc})")
        return "boot-failure", Failure(phase="startup", message=(
            f"the server exited with code {server_rc} before /health answered"))
    if logged is not None:  # the server failed while the benchmark ran
        return "runtime-oom" if logged.phase in ("first_request", "killed") else "degraded", logged
    if bench is None or bench_rc != 0:
        tail = " | ".join((bench_output or "").strip().splitlines()[-3:])
        why = (f"the benchmark did not finish within {h.bench_timeout_s:g} s" if bench_rc is None
               else f"the benchmark exited with code {bench_rc}")
        return "degraded", Failure(phase="bench", message=f"{why}: {tail}" if tail else why)
    done = bench.get("successful_requests")
    if isinstance(done, int) and done < w.num_prompts:
        return "degraded", Failure(phase="bench", message=f"{done} of {w.num_prompts} requests completed")
    return "serves", None


def _check(boot: BootLog, point: Point, build: Build, python_program: tuple[str, ...]) -> dict[str, Any]:
    """`logs check` on the point's own command; a command the engine model cannot load is noted, not fatal."""
    from hybridplan.engine.api import LaunchCommand
    from hybridplan.engine.api import check_log

    cmd = LaunchCommand(env=tuple(_env_pairs(point.env).items()), program=python_program,
                        argv=tuple(t for f in point.flags for t in f.split()))
    try:
        return check_log(boot, cmd, log_version=build.version)
    except HybridPlanError as exc:
        return {"error": exc.message}


def _wait_for_port(h: Harness, timeout_s: float = 30.0) -> None:
    """The port must be free before a server starts, or /health would answer for someone else's server."""
    deadline = time.monotonic() + timeout_s
    while not port_free(h.host, h.port):
        if time.monotonic() > deadline:
            raise BadInput(f"{h.host}:{h.port} is in use by a process verify did not start; pass another --port")
        time.sleep(0.2)


def point_key(point: Point, *, page_id: str, gpu: str, build: Build, w: Workload) -> RunKey:
    return RunKey(engine_version=build.version, engine_commit=build.commit, gpu=gpu, page=page_id,
                  selection=point.selection, flags=point.key_flags, env=point.env, workload=w.as_dict())


def run_point(point: Point, n: int, *, key: RunKey, build: Build, w: Workload, h: Harness,
              bench_template: str | None) -> Run:
    """Boot, benchmark, stop and classify one point. The server's group is stopped whatever happens."""
    argv = [*SERVER_MODULE, *(t for f in point.flags for t in f.split())]
    launch = wrapped(argv, _env_pairs(point.env), launcher=h.launcher, python=h.python)
    bench_text = bench_cmd = None
    bench_rc: int | None = None
    server: ServerProcess | None = None
    _wait_for_port(h)
    try:
        server = ServerProcess(launch, h.run_dir / f"{n:04d}-server.log")
        state = server.wait_healthy(h.health_url, h.boot_timeout_s, h.stop)
        if state == "ready":
            bench_launch = wrapped(bench_argv(bench_template, w, host=h.host, port=h.port), {},
                                   launcher=h.bench_launcher if h.bench_launcher is not None else h.launcher,
                                   python=h.python)
            bench_cmd = bench_launch.text()
            fin = run_to_end(bench_launch, h.bench_timeout_s, h.stop)
            bench_text, bench_rc = fin.output, fin.returncode
            (h.run_dir / f"{n:04d}-bench.txt").write_text(bench_text)
    finally:
        server_rc = server.stop(h.stop_grace_s) if server is not None else None
    log = server.log_text()
    boot = parse_log(log)
    bench = parse_bench(bench_text) if bench_text is not None else None
    outcome, failure = _outcome(state, server_rc, boot, bench, bench_rc, bench_text, w, h)
    return Run(key=key, sweep=label(point.sweep), outcome=outcome, failure=None if failure is None else failure.as_dict(),
               boot=boot.as_dict(), bench=bench, check=_check(boot, point, build, (h.python, *SERVER_MODULE)),
               command=launch.text(), bench_command=bench_cmd, log=log, bench_output=bench_text)


@dataclass
class Progress:
    """What a sweep did, point by point (the `verify --json` payload's `points`)."""

    done: list[dict[str, Any]] = field(default_factory=list)
    resumed: list[dict[str, Any]] = field(default_factory=list)


def run_points(points: list[Point], *, store: Store, page_id: str, gpu: str, build: Build, w: Workload, h: Harness,
               bench_template: str | None, rerun: bool = False,
               on_point: Callable[[str, Point, Run | None], None] | None = None) -> Progress:
    """Run every point not yet in the store (all of them with `rerun`), recording each as soon as it finishes.
    Raises Interrupted once `h.stop` is set, after stopping the point's server; finished points stay recorded."""
    progress = Progress()
    h.run_dir.mkdir(parents=True, exist_ok=True)
    for n, point in enumerate(points):
        if h.stop.is_set():
            raise Interrupted
        key = point_key(point, page_id=page_id, gpu=gpu, build=build, w=w)
        if not rerun and store.has(key):
            progress.resumed.append({"selection": point.selection, "sweep": label(point.sweep)})
            if on_point:
                on_point("recorded", point, None)
            continue
        if on_point:
            on_point("start", point, None)
        run = run_point(point, n, key=key, build=build, w=w, h=h, bench_template=bench_template)
        run_id = store.record(run)
        progress.done.append({"id": run_id, "selection": point.selection, "sweep": run.sweep, "outcome": run.outcome,
                              "failure": run.failure})
        if on_point:
            on_point("done", point, run)
    return progress
