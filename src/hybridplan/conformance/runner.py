"""Run the oracle driver in another interpreter and compare every scenario with hybridplan."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from hybridplan.conformance.compare import Drift, compare, tally
from hybridplan.conformance.fixtures import materialize
from hybridplan.conformance.model_side import predict
from hybridplan.conformance.scenarios import Scenario, default_fraction_grid, generate

class NoEngine(Exception):
    """The interpreter has no usable sglang (exit 2 of check-engine)."""


@dataclass(frozen=True, kw_only=True)
class Report:
    engine: dict  # the driver's header: version, python, gpu_mib
    scenarios: list[Scenario]
    drifts: list[Drift]
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
                "tally": {k: dict(sorted(v.items())) for k, v in self.counts.items()}}


def driver_path() -> Path:
    return Path(str(resources.files("hybridplan.conformance") / "oracle_driver.py"))


def run_oracle(python: str, scenarios: list[Scenario], timeout: float = 1800) -> tuple[dict, dict]:
    """(header, {scenario id: engine result}) from the driver run by `python`."""
    payload = "".join(json.dumps(sc.payload()) + "\n" for sc in scenarios)
    try:
        proc = subprocess.run([python, str(driver_path())], input=payload, capture_output=True, text=True,
                              timeout=timeout, env=_clean_env())
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


def check(python: str, *, n: int = 500, seed: int = 0, workdir: Path | None = None) -> Report:
    """The default-fraction grid and `n` sampled scenarios, run through the engine in `python` and through
    hybridplan, compared."""
    from hybridplan.models.loader import load_model

    with tempfile.TemporaryDirectory(prefix="hybridplan-conformance-") as tmp:
        root = Path(workdir) if workdir is not None else Path(tmp)
        models = materialize(root / "models")
        scenarios = default_fraction_grid(models) + generate(models, n, seed=seed)
        header, engine = run_oracle(python, scenarios)
        families = {k: f"{load_model(m.path).family}:{m.architecture}" for k, m in models.items() if not m.is_draft}
        drifts = [d for sc in scenarios for d in compare(engine[sc.id], predict(sc))]
        return Report(engine=header, scenarios=scenarios, drifts=drifts, counts=tally(scenarios, engine, families))
