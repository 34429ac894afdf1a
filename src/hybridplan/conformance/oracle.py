"""What the conformance suite knows about one oracle, so one runner, one comparison and one recording serve every
engine: its driver and schema, the scenarios a release is checked on with hybridplan's answers, where a release
runs beside the oracle interpreter, and which hybridplan rule computes each field. An engine has one oracle or more
(vLLM: its planning, `conformance/vllm/oracle.py::ORACLE`, and its parser, `conformance/vllm/parser.py::ORACLE`),
each named in ORACLES; the releases are the engine API's (adding one there asks for its recordings)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any

from hybridplan.conformance.compare import Answer, Case, Comparison, KeyOf

# oracle name -> the module of this package whose ORACLE describes it (each engine's package holds its drivers)
ORACLES: dict[str, str] = {"sglang": "sglang.oracle", "vllm": "vllm.oracle", "vllm-parser": "vllm.parser"}
ENGINES = ("sglang", "vllm")  # the engines with an oracle


@dataclass(frozen=True, kw_only=True)
class Oracle:
    """One oracle of an engine: a driver run in the engine's interpreter and how its answers compare."""

    name: str  # one of ORACLES: its recordings are conformance/recorded/<name>-<version>.json.gz
    engine: str  # the engine API's name (its releases are the ones recorded)
    driver: str  # the driver module of this package launch.py starts in the oracle interpreter ("vllm.driver")
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


def oracle(name: str) -> Oracle:
    """The oracle called `name` (one of ORACLES; an engine's name is its main oracle's)."""
    if name not in ORACLES:
        raise ValueError(f"no oracle {name!r} (one of {', '.join(ORACLES)})")
    described: Oracle = import_module(f"hybridplan.conformance.{ORACLES[name]}").ORACLE
    return described


def of_engine(engine: str) -> tuple[Oracle, ...]:
    """Every oracle of `engine` (one of ENGINES)."""
    found = tuple(o for o in map(oracle, ORACLES) if o.engine == engine)
    if not found:
        raise ValueError(f"no oracle for {engine!r} (one of {', '.join(ENGINES)})")
    return found
