"""Run an engine's oracle driver in another interpreter on a batch of scenarios and read its answers through the
engine's schema (one runner for every engine: the differences are in its Oracle description)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from hybridplan.conformance.compare import Answer
from hybridplan.conformance.oracle import Oracle
from hybridplan.conformance.wire import SchemaError

Header = Mapping[str, Any]


class NoEngine(Exception):
    """The interpreter cannot run the engine release asked for (exit 2 of check-engine)."""


def launcher() -> Path:
    """launch.py, which the oracle interpreter runs to start a driver."""
    return Path(str(resources.files("hybridplan.conformance") / "launch.py"))


def oracle_workers() -> int:
    """How many driver processes share a batch: HYBRIDPLAN_ORACLE_WORKERS, else one per core up to 2."""
    given = os.environ.get("HYBRIDPLAN_ORACLE_WORKERS", "")
    return max(1, int(given)) if given.isdigit() else max(1, min(2, os.cpu_count() or 1))


def run_oracle(oracle: Oracle, python: str, payloads: Sequence[Mapping[str, Any]], *, version: str | None = None,
               timeout: float = 1800, workers: int | None = None) -> tuple[Header, dict[str, Answer]]:
    """(header, {scenario id: engine answer}) from `oracle`'s driver run by `python` (release `version`: the one
    unpacked beside it; None: its own), the batch dealt round-robin over `workers` driver processes running at once
    (each pays the engine's import once)."""
    pythonpath = oracle.pythonpath(python, version) if version is not None else None
    n = max(1, min(workers or oracle_workers(), len(payloads)))
    env = _clean_env(oracle.env_prefix, pythonpath)
    with tempfile.TemporaryDirectory(prefix="hybridplan-oracle-") as tmp:
        procs = []
        try:
            for w in range(n):
                base = Path(tmp) / str(w)
                base.with_suffix(".in").write_text("".join(json.dumps(p) + "\n" for p in payloads[w::n]))
                with open(base.with_suffix(".in")) as fin, open(base.with_suffix(".out"), "w") as fout, \
                        open(base.with_suffix(".err"), "w") as ferr:
                    procs.append((base, subprocess.Popen([python, str(launcher()), oracle.driver], stdin=fin,
                                                         stdout=fout, stderr=ferr, text=True, env=env)))
            for _, proc in procs:
                proc.wait(timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            for _, proc in procs:
                proc.kill()
                proc.wait()
            raise NoEngine(f"cannot run the {oracle.name} oracle with {python}: {exc}") from None
        read = [read_answer(oracle, base.with_suffix(".out").read_text(), base.with_suffix(".err").read_text(),
                            returncode=proc.returncode, python=python) for base, proc in procs]
    header = read[0][0]  # every worker runs the same interpreter
    if version is not None and header.get("version") != version:
        raise NoEngine(f"{python} runs {oracle.engine} {header.get('version')}, not {version}: run {oracle.setup}")
    results = {sid: r for _, part in read for sid, r in part.items()}
    if any(p["id"] not in results for p in payloads):
        raise NoEngine(f"the {oracle.name} oracle stopped after {len(results)} of {len(payloads)} scenarios")
    return header, results


def read_answer(oracle: Oracle, stdout: str, stderr: str = "", *, returncode: int = 0,
                python: str = "the oracle interpreter") -> tuple[Header, dict[str, Answer]]:
    """One driver process's header and answers, each checked by the engine's schema (SchemaError names the field);
    NoEngine where the driver did not run, found no engine, or stopped early."""
    try:  # JSON lines only: an older release's logger also writes to stdout (vLLM 0.24.0's version warning)
        lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    except ValueError as exc:
        raise SchemaError(f"{oracle.name} oracle answer: not JSON ({exc})") from None
    tail = " | ".join(stderr.strip().splitlines()[-3:])
    if not lines or not lines[0].get("header"):
        raise NoEngine(f"{python} did not run the {oracle.name} oracle driver (exit {returncode}): {tail}")
    header = oracle.header(lines[0])
    if header["engine"] is None:
        raise NoEngine(f"no usable {oracle.engine} in {python}: {header.get('error')} (run {oracle.setup})")
    if returncode != 0:
        raise NoEngine(f"the {oracle.name} oracle stopped after {len(lines) - 1} scenarios (exit {returncode}): "
                       f"{tail}")
    answers = [oracle.result(line) for line in lines[1:]]
    return header, {str(a["id"]): a for a in answers}


def _clean_env(prefix: str, pythonpath: str | None) -> dict[str, str]:
    """The caller's environment without the engine's variables (a scenario sets its own) and PYTHONPATH
    (`pythonpath` instead, where given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefix) and k != "PYTHONPATH"}
    return env | ({"PYTHONPATH": pythonpath} if pythonpath else {})
