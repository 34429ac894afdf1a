"""The one plan search, whatever the engine: each engine offers its knobs as dimensions (every option a dimension can
take, None for "as the launch has it"), each knob with what it costs the user and why it helps; the search tries
every combination, cheapest first, and the engine evaluates each on the card. A knob sets flags in the engine's own
spelling; applying a candidate edits the launch through the engine's flag registry (engine/argv.py)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from hybridplan.engine.argv import with_flag
from hybridplan.engine.registry import FlagRegistry


@dataclass(frozen=True, kw_only=True)
class Knob:
    """One change the search may make: flags to set (value None: a switch), what it gives up, and why it helps."""

    label: str
    sets: tuple[tuple[str, str | None], ...]
    cost: float
    why: str


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One point of the search: the knobs it turns and what they cost."""

    knobs: tuple[Knob, ...]

    @property
    def cost(self) -> float:
        return round(sum(k.cost for k in self.knobs), 6)

    @property
    def changes(self) -> list[str]:
        return [k.label for k in self.knobs]

    def apply(self, argv: tuple[str, ...], reg: FlagRegistry) -> tuple[str, ...]:
        for k in self.knobs:
            for option, value in k.sets:
                argv = with_flag(argv, option, value, reg)
        return argv


def candidates(dims: list[list[Knob | None]]) -> list[Candidate]:
    """Every combination of the dimensions' options, cheapest first (fewest knobs on a tie)."""
    out = [Candidate(knobs=tuple(k for k in combo if k is not None)) for combo in itertools.product(*dims)]
    return sorted(out, key=lambda c: (c.cost, len(c.knobs)))
