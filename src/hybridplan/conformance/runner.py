"""Run the oracle driver in another interpreter and compare every scenario with hybridplan."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from hybridplan.conformance.compare import Drift, compare, tally
from hybridplan.conformance.fixtures import materialize
from hybridplan.conformance.match import Match, match
from hybridplan.conformance.model_side import predict
from hybridplan.conformance.oracle_schema import Header, Result
from hybridplan.conformance.scenarios import Scenario, default_fraction_grid, generate, release_scenarios

class NoEngine(Exception):
    """The interpreter has no usable sglang (exit 2 of check-engine)."""


@dataclass(frozen=True, kw_only=True)
class Report:
    engine: Header  # the driver's header: version, python, gpu_mib
    scenarios: list[Scenario]
    drifts: list[Drift]
    counts: dict[str, Counter[str]] = field(default_factory=dict)
    match: Match | None = None  # check(): the modelled release the engine behaves as (drifts are against it)

    @property
    def drifted_rules(self) -> Counter[str]:
        return Counter(d.rule for d in self.drifts)

    @property
    def drifted_scenarios(self) -> int:
        return len({d.scenario for d in self.drifts})

    def as_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "scenarios": len(self.scenarios), "drifted_scenarios": self.drifted_scenarios,
                "drifted_rules": dict(self.drifted_rules), "drifts": [d.as_dict() for d in self.drifts],
                "tally": {k: dict(sorted(v.items())) for k, v in self.counts.items()}} | (
                    {"match": self.match.as_dict()} if self.match is not None else {})


def driver_path() -> Path:
    return Path(str(resources.files("hybridplan.conformance") / "oracle_driver.py"))


def oracle_workers() -> int:
    """How many driver processes share a batch: HYBRIDPLAN_ORACLE_WORKERS, else one per core up to 2."""
    import os

    given = os.environ.get("HYBRIDPLAN_ORACLE_WORKERS", "")
    return max(1, int(given)) if given.isdigit() else max(1, min(2, os.cpu_count() or 1))


def release_pythonpath(python: str, version: str) -> str | None:
    """The PYTHONPATH under which the oracle interpreter imports release `version` (unpacked by
    conformance/setup_releases.sh into <venv>/releases/<version>/sys_path.txt); None for its installed release."""
    listing = Path(python).absolute().parent.parent / "releases" / version / "sys_path.txt"
    if not listing.exists():
        raise NoEngine(f"release {version} is not unpacked: run conformance/setup_releases.sh")
    paths = [line for line in listing.read_text().splitlines() if line.strip()]
    return ":".join(paths) or None


def run_oracle(python: str, scenarios: list[Scenario], timeout: float = 1800,
               workers: int | None = None, pythonpath: str | None = None) -> tuple[Header, dict[str, Result]]:
    """(header, {scenario id: engine result}) from the driver run by `python` (with `pythonpath`: another release),
    the batch dealt round-robin over `workers` driver processes running at once (each pays the engine's import
    once)."""
    n = max(1, min(workers or oracle_workers(), len(scenarios)))
    with tempfile.TemporaryDirectory(prefix="hybridplan-oracle-") as tmp:
        procs = []
        try:
            for w in range(n):
                base = Path(tmp) / str(w)
                (base.with_suffix(".in")).write_text("".join(json.dumps(sc.payload()) + "\n"
                                                             for sc in scenarios[w::n]))
                with open(base.with_suffix(".in")) as fin, open(base.with_suffix(".out"), "w") as fout, \
                        open(base.with_suffix(".err"), "w") as ferr:
                    procs.append((base, subprocess.Popen([python, str(driver_path())], stdin=fin, stdout=fout,
                                                         stderr=ferr, text=True, env=_clean_env(pythonpath))))
            for _, proc in procs:
                proc.wait(timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            for _, proc in procs:
                proc.kill()
                proc.wait()
            raise NoEngine(f"cannot run the oracle with {python}: {exc}") from None
        read = [_read_driver(python, proc.returncode, base.with_suffix(".out").read_text(),
                             base.with_suffix(".err").read_text()) for base, proc in procs]
        header = read[0][0]  # every worker runs the same interpreter
        results = {sid: r for _, part in read for sid, r in part.items()}
    missing = [sc.id for sc in scenarios if sc.id not in results]
    if missing:
        raise NoEngine(f"the oracle stopped after {len(results)} of {len(scenarios)} scenarios")
    return header, results


def _read_driver(python: str, returncode: int, stdout: str, stderr: str) -> tuple[Header, dict[str, Result]]:
    """One driver process's header and results; NoEngine where it did not run or stopped early."""
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    tail = " | ".join(stderr.strip().splitlines()[-3:])
    if not lines or not lines[0].get("header"):
        raise NoEngine(f"{python} did not run the oracle driver (exit {returncode}): {tail}")
    header = lines[0]
    if header.get("engine") is None:
        raise NoEngine(f"no usable sglang in {python}: {header.get('error')}")
    if returncode != 0:
        raise NoEngine(f"the oracle stopped after {len(lines) - 1} scenarios (exit {returncode}): {tail}")
    return header, {r["id"]: r for r in lines[1:]}


def _clean_env(pythonpath: str | None = None) -> dict[str, Any]:
    """The caller's environment without the engine variables a scenario sets itself (PYTHONPATH: `pythonpath`)."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_") and k != "PYTHONPATH"}
    return env | ({"PYTHONPATH": pythonpath} if pythonpath else {})


def check(python: str, *, n: int = 500, seed: int = 0, workdir: Path | None = None) -> Report:
    """The default-fraction grid and `n` sampled scenarios, run through the engine in `python` and through
    hybridplan's model of the release it reports (else of every release, the closest kept), compared."""
    from hybridplan.models.loader import load_model

    with tempfile.TemporaryDirectory(prefix="hybridplan-conformance-") as tmp:
        root = Path(workdir) if workdir is not None else Path(tmp)
        models = materialize(root / "models")
        scenarios = default_fraction_grid(models) + generate(models, n, seed=seed)
        header, engine = run_oracle(python, scenarios)
        families = {k: f"{load_model(m.path).family}:{m.architecture}" for k, m in models.items() if not m.is_draft}
        found = match(header, scenarios, engine)
        return Report(engine=header, scenarios=scenarios, drifts=found.drifts,
                      counts=tally(scenarios, engine, families), match=found)


def check_release(python: str, version: str, *, n: int = 100, seed: int = 0,
                  skip: Callable[[Scenario], bool] | None = None) -> Report:
    """The release-difference scenarios and `n` sampled ones (less those `skip` names), run through release
    `version`'s own code (unpacked beside the oracle venv) and through hybridplan's model of it, compared."""
    from hybridplan.models.loader import load_model

    with tempfile.TemporaryDirectory(prefix="hybridplan-conformance-") as tmp:
        models = materialize(Path(tmp) / "models")
        scenarios = [sc for sc in release_scenarios(models) + generate(models, n, seed=seed)
                     if skip is None or not skip(sc)]
        header, engine = run_oracle(python, scenarios, pythonpath=release_pythonpath(python, version))
        families = {k: f"{load_model(m.path).family}:{m.architecture}" for k, m in models.items() if not m.is_draft}
        drifts = [d for sc in scenarios for d in compare(engine[sc.id], predict(sc, version))]
        return Report(engine=header, scenarios=scenarios, drifts=drifts, counts=tally(scenarios, engine, families))

