"""`hybridplan check-engine`: the sglang an interpreter has installed, run on the default-fraction grid and a
sample, compared with hybridplan's model of the release it reports (else of every release, the closest named)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridplan.conformance.compare import Report, report
from hybridplan.conformance.runner import run_oracle
from hybridplan.conformance.sglang.fixtures import materialize
from hybridplan.conformance.sglang.match import Match, match
from hybridplan.conformance.sglang.oracle import ORACLE, as_cases
from hybridplan.conformance.sglang.scenarios import default_fraction_grid, generate


@dataclass(frozen=True, kw_only=True)
class EngineCheck(Report):
    """The report, with the modelled release the engine behaves as (the drifts are against it)."""

    match: Match

    def as_dict(self) -> dict[str, Any]:
        return super().as_dict() | {"match": self.match.as_dict()}


def check(python: str, *, n: int = 500, seed: int = 0, workdir: Path | None = None) -> EngineCheck:
    """The default-fraction grid and `n` sampled scenarios, run through the engine in `python` and through
    hybridplan's model of the release it reports (else of every release, the closest kept), compared."""
    with tempfile.TemporaryDirectory(prefix="hybridplan-conformance-") as tmp:
        models = materialize((Path(workdir) if workdir is not None else Path(tmp)) / "models")
        scenarios = default_fraction_grid(models) + generate(models, n, seed=seed)
        header, answers = run_oracle(ORACLE, python, [sc.payload() for sc in scenarios])
        found = match(header, scenarios, answers)
        compared = report(header, as_cases(scenarios, models, found.version), answers, ORACLE.comparison,
                          ORACLE.outcome, ORACLE.counters)
    return EngineCheck(engine=compared.engine, cases=compared.cases, drifts=compared.drifts, counts=compared.counts,
                       match=found)
