"""Run the real server and its benchmark as subprocesses: optionally wrapped (e.g. `docker run ...`), in a process
group of their own so that stopping kills exactly what was started, and nothing else."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HEALTH_POLL_S = 0.5
WAIT_POLL_S = 0.5


class Interrupted(Exception):
    """SIGINT or SIGTERM asked the run to stop; raised only where nothing is half-started or half-stopped."""


def _check(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise Interrupted


@dataclass(frozen=True, kw_only=True)
class Launch:
    """An argv to exec and the environment additions it needs (the launch command's own env assignments)."""

    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        return " ".join(shlex.quote(a) for a in self.argv)


def wrapped(module_argv: list[str] | tuple[str, ...], env: dict[str, str], *, launcher: str | None,
            python: str) -> Launch:
    """`python -m <module> ...` run directly (env merged into the child's environment) or through a launcher.

    A launcher is a command prefix (`docker run --rm --gpus all --network host IMAGE`); the env assignments then
    travel inside it as `env K=V ...` so they reach the server whatever the wrapper is.
    """
    program = [python, *module_argv]
    if not launcher:
        return Launch(argv=tuple(program), env=dict(env))
    prefix = shlex.split(launcher)
    assignments = [f"{k}={v}" for k, v in env.items()]
    return Launch(argv=tuple(prefix + (["env", *assignments] if assignments else []) + program))


def _environ(launch: Launch) -> dict[str, str]:
    out = dict(os.environ)
    out.update(launch.env)
    return out


def kill_group(pgid: int, sig: int) -> None:
    """Signal one process group we started; a group that is already gone is fine."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def port_free(host: str, port: int) -> bool:
    """Whether nothing listens on host:port (a server we did not start must not answer our health checks)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def health_ok(url: str, timeout_s: float = 2.0) -> bool:
    """Whether GET url answers 200 (the server's /health)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:  # noqa: S310 - a local URL we built
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


class ServerProcess:
    """The server, started in a new session (its own process group); its stdout and stderr go to one log file."""

    def __init__(self, launch: Launch, log_path: Path) -> None:
        self.launch = launch
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(launch.argv, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=_environ(launch), start_new_session=True)
        self.pgid = self.proc.pid  # start_new_session: the child leads a new group

    def wait_healthy(self, url: str, timeout_s: float, stop: threading.Event | None = None) -> str:
        """'ready' once /health answers, 'exited' if the server died first, 'timeout' otherwise."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            _check(stop)
            if self.proc.poll() is not None:
                return "exited"
            if health_ok(url):
                return "ready"
            time.sleep(HEALTH_POLL_S)
        return "exited" if self.proc.poll() is not None else "timeout"

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def stop(self, grace_s: float = 30.0) -> int | None:
        """SIGTERM the group, then SIGKILL what is left after `grace_s`; only this server's group is signalled."""
        try:
            if self.proc.poll() is None:
                kill_group(self.pgid, signal.SIGTERM)
                try:
                    self.proc.wait(timeout=grace_s)
                except subprocess.TimeoutExpired:
                    pass
            kill_group(self.pgid, signal.SIGKILL)  # children that outlived the leader (the engine's workers)
            self.proc.wait(timeout=grace_s)
        finally:
            self._log.close()
        return self.proc.returncode

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


@dataclass(frozen=True, kw_only=True)
class Finished:
    """A command that ran to the end (or to its timeout)."""

    returncode: int | None  # None: killed at the timeout
    output: str


def run_to_end(launch: Launch, timeout_s: float, stop: threading.Event | None = None) -> Finished:
    """Run a short command (the benchmark, a version probe) in its own group; kill the group at the timeout or
    when asked to stop (then Interrupted is raised)."""
    proc = subprocess.Popen(launch.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=_environ(launch), start_new_session=True)
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                out, _ = proc.communicate(timeout=min(WAIT_POLL_S, max(deadline - time.monotonic(), 0.01)))
                return Finished(returncode=proc.returncode, output=out.decode(errors="replace"))
            except subprocess.TimeoutExpired:
                _check(stop)
                if time.monotonic() >= deadline:
                    kill_group(proc.pid, signal.SIGKILL)
                    out, _ = proc.communicate()
                    return Finished(returncode=None, output=out.decode(errors="replace"))
    finally:
        if proc.poll() is None:
            kill_group(proc.pid, signal.SIGKILL)
            proc.wait()
