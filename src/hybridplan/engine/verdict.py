"""The verdict every engine gives a launch on a card: does it start and serve, else the phase it fails in, the
engine's own message where it refuses, the numbers behind it in the engine's terms, and what the prediction rests on
(its confidence, from hybridplan.evidence). One type for every engine; each engine's serving side runs its own
startup checks, in its own order, to produce it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the evidence rules load the GPU catalog: a verdict without a card never needs them
    from hybridplan.evidence import Confidence


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """One launch on one card: serves, or the failing phase (each engine names its phases in boot order), why in
    numbers, and (where the engine refuses with a message of its own) that message and the rule it comes from."""

    serves: bool
    phase: str | None
    why: str
    figures: Mapping[str, Any] = field(default_factory=dict)  # the numbers behind it, named in the engine's terms
    message: str | None = None  # the engine's own words, where it refuses to start
    rule: str | None = None  # the engine file::function that refuses
    confidence: Confidence | None = None  # what the prediction rests on, with a catalog card

    def figure(self, name: str) -> Any:
        """One of the numbers behind the verdict (None when the engine did not get that far)."""
        return self.figures.get(name)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"serves": self.serves, "phase": self.phase, "why": self.why, **self.figures}
        if self.message is not None:
            out["message"], out["rule"] = self.message, self.rule
        out["confidence"] = self.confidence.as_dict() if self.confidence is not None else None
        return out
