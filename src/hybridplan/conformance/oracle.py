"""What the conformance suite knows about one engine, so one runner, one comparison and one recording serve every
engine: its driver and schema, the scenarios a release is checked on with hybridplan's answers, where a release
runs beside the oracle interpreter, and which hybridplan rule computes each field. Each engine's description is
`conformance/<engine>/oracle.py::ORACLE`; the releases are the engine API's (adding one there asks for its
recording)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any

from hybridplan.conformance.compare import Answer, Case, Comparison, KeyOf

ENGINES = ("sglang", "vllm")  # the engines with an oracle (each a package here: driver.py, schema.py, oracle.py)


@dataclass(frozen=True, kw_only=True)
class Oracle:
    """One engine's side of the conformance suite."""

    engine: str  # the engine API's name; its driver is <engine>/driver.py, started by launch.py
    setup: str  # the script that makes a release runnable beside the oracle interpreter
    header: Callable[[object], Mapping[str, Any]]  # the schema's check of the driver's first line
    result: Callable[[object], Answer]  # the schema's check of each answer
    cases: Callable[[str, Path], list[Case]]  # (release, a directory for the files the driver reads) -> scenarios
    # (oracle python, release) -> the PYTHONPATH that runs it (None: the python's own; NoEngine: not unpacked there)
    pythonpath: Callable[[str, str], str | None]
    env_prefix: str  # the engine's environment variables: a scenario sets its own, the caller's are dropped
    comparison: Comparison
    outcome: Callable[[Answer], str]  # how an answer ended (the branch it took, or its refusal), for the tally
    counters: Mapping[str, KeyOf] = field(default_factory=dict)  # further tallies

    @property
    def releases(self) -> tuple[str, ...]:
        """The modelled releases, oldest first: each has a recording, the newest is also re-run live."""
        from hybridplan.engine.api import releases

        return releases(self.engine)


def oracle(engine: str) -> Oracle:
    """The description of `engine` (one of ENGINES)."""
    if engine not in ENGINES:
        raise ValueError(f"no oracle for {engine!r} (one of {', '.join(ENGINES)})")
    described: Oracle = import_module(f"hybridplan.conformance.{engine}.oracle").ORACLE
    return described
