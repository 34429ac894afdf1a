"""Run the oracle driver in another interpreter and compare every scenario with hybridplan."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from hybridplan.conformance.compare import Drift, compare, known, open_drift, tally
from hybridplan.conformance.fixtures import materialize
from hybridplan.conformance.model_side import predict
from hybridplan.conformance.scenarios import Scenario, generate

DEFAULT_GPU_MIB = 143771  # an H200 as nvidia-smi reports it


class NoEngine(Exception):
    """The interpreter has no usable sglang (exit 2 of check-engine)."""


@dataclass(frozen=True, kw_only=True)
class Report:
    engine: dict  # the driver's header: version, python, gpu_mib
    scenarios: list[Scenario]
    drifts: list[Drift]
    known: dict[str, str] = field(default_factory=dict)  # scenario id -> why it is not compared
    open_drifts: list[tuple[Drift, str]] = field(default_factory=list)  # reported drifts still open, with why
    counts: dict[str, Counter] = field(default_factory=dict)

    @property
    def drifted_rules(self) -> Counter:
        return Counter(d.rule for d in self.drifts)

    @property
    def drifted_scenarios(self) -> int:
        return len({d.scenario for d in self.drifts})

    def as_dict(self) -> dict:
        return {"engine": self.engine, "scenarios": len(self.scenarios), "drifted_scenarios": self.drifted_scenarios,
                "drifted_rules": dict(self.drifted_rules), "drifts": [d.as_dict() for d in self.drifts],
                "known": self.known, "open_drifts": [{**d.as_dict(), "why": why} for d, why in self.open_drifts],
                "tally": {k: dict(sorted(v.items())) for k, v in self.counts.items()}}


def driver_path() -> Path:
    return Path(str(resources.files("hybridplan.conformance") / "oracle_driver.py"))


def run_oracle(python: str, scenarios: list[Scenario], gpu_mib: int, timeout: float = 1800) -> tuple[dict, dict]:
    """(header, {scenario id: engine result}) from the driver run by `python`."""
    payload = "".join(json.dumps(sc.payload()) + "\n" for sc in scenarios)
    try:
        proc = subprocess.run([python, str(driver_path())], input=payload, capture_output=True, text=True,
                              timeout=timeout, env={**_clean_env(), "ORACLE_GPU_MIB": str(gpu_mib)})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NoEngine(f"cannot run the oracle with {python}: {exc}") from None
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if not lines or not lines[0].get("header"):
        tail = proc.stderr.strip().splitlines()[-3:]
        raise NoEngine(f"{python} did not run the oracle driver (exit {proc.returncode}): {' | '.join(tail)}")
    header = lines[0]
    if header.get("engine") is None:
        raise NoEngine(f"no usable sglang in {python}: {header.get('error')}")
    results = {r["id"]: r for r in lines[1:]}
    missing = [sc.id for sc in scenarios if sc.id not in results]
    if missing:
        tail = proc.stderr.strip().splitlines()[-3:]
        raise NoEngine(f"the oracle stopped after {len(results)} of {len(scenarios)} scenarios: {' | '.join(tail)}")
    return header, results


def _clean_env() -> dict:
    """The caller's environment without the engine variables a scenario sets itself."""
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}


def check(python: str, *, n: int = 500, seed: int = 0, gpu_mib: int = DEFAULT_GPU_MIB,
          workdir: Path | None = None) -> Report:
    """Generate `n` scenarios, run them through the engine in `python` and through hybridplan, compare."""
    from hybridplan.models.loader import load_model

    with tempfile.TemporaryDirectory(prefix="hybridplan-conformance-") as tmp:
        root = Path(workdir) if workdir is not None else Path(tmp)
        models = materialize(root / "models")
        scenarios = generate(models, n, seed=seed, gpu_mib=gpu_mib)
        header, engine = run_oracle(python, scenarios, gpu_mib)
        families = {k: f"{load_model(m.path).family}:{m.architecture}" for k, m in models.items() if not m.is_draft}
        drifts: list[Drift] = []
        opened: list[tuple[Drift, str]] = []
        skipped: dict[str, str] = {}
        for sc in scenarios:
            why = known(engine[sc.id])
            if why is not None:
                skipped[sc.id] = why.reason
                continue
            for drift in compare(engine[sc.id], predict(sc, gpu_mib)):
                reason = open_drift(drift, sc.tags)
                if reason is None:
                    drifts.append(drift)
                else:
                    opened.append((drift, reason))
        return Report(engine=header, scenarios=scenarios, drifts=drifts, known=skipped, open_drifts=opened,
                      counts=tally(scenarios, engine, families))
