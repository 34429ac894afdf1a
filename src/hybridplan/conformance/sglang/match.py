"""Which modelled release an installed engine behaves as: the release it reports, when that is modelled and nothing
drifts; else every modelled release is compared and the one with the fewest drifted fields is named."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hybridplan.conformance.compare import Drift, compare
from hybridplan.conformance.sglang.model_side import predict
from hybridplan.conformance.sglang.oracle import ORACLE
from hybridplan.conformance.sglang.scenarios import Scenario
from hybridplan.conformance.sglang.schema import Result
from hybridplan.engine.api import SUPPORTED, release_of

Predictor = Callable[[Scenario, str], Result]


@dataclass(frozen=True, kw_only=True)
class Match:
    """The release compared last (the reported one, or the closest), its drifts, and each release's drift count."""

    version: str
    reported: str | None  # the version the engine reports (the driver header)
    reported_release: str | None  # the modelled release that is, or None (dev build, outside the range)
    drifts: list[Drift]
    drifts_by_version: dict[str, int]

    @property
    def summary(self) -> str:
        """'matches sglang X', or 'closest: X; first drifted rule: R (scenario field: engine .. hybridplan ..)'."""
        if not self.drifts:
            return f"matches sglang {self.version}"
        d = self.drifts[0]
        return (f"closest: {self.version}; first drifted rule: {d.rule} ({d.scenario} {d.field}: engine "
                f"{d.engine!r} hybridplan {d.hybridplan!r})")

    def as_dict(self) -> dict[str, Any]:
        return {"version": self.version, "exact": not self.drifts, "reported": self.reported,
                "reported_release": self.reported_release, "drifts_by_version": self.drifts_by_version,
                "first_drift": self.drifts[0].as_dict() if self.drifts else None, "summary": self.summary}


def match(header: Mapping[str, Any], scenarios: Sequence[Scenario], results: Mapping[str, Mapping[str, Any]],
          predictor: Predictor = predict) -> Match:
    """Compare the driver's `results` with hybridplan's model of the reported release, else of every release
    (ties go to the reported release, then the newest)."""
    reported = header.get("version")
    release = release_of(reported)[0] if isinstance(reported, str) else None

    def drifts_for(version: str) -> list[Drift]:
        return [d for sc in scenarios for d in compare(results[sc.id], predictor(sc, version), ORACLE.comparison)]

    compared: dict[str, list[Drift]] = {}
    if release is not None:
        compared[release] = drifts_for(release)
    if release is None or compared[release]:
        for version in SUPPORTED:
            if version not in compared:
                compared[version] = drifts_for(version)
    best = min(compared, key=lambda v: (len(compared[v]), v != release, -SUPPORTED.index(v)))
    return Match(version=best, reported=reported, reported_release=release, drifts=compared[best],
                 drifts_by_version={v: len(compared[v]) for v in SUPPORTED if v in compared})
