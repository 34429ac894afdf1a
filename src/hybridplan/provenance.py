"""Where a number came from: every printed value carries one of these sources."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class Source(str, Enum):
    """Provenance of a value, in the words the output uses."""

    EXPLICIT = "explicit"  # typed by the user in the launch command
    DEFAULT = "default"  # the engine's default for an unset flag
    DERIVED = "derived"  # rewritten by an engine resolution rule
    CONFIG = "config"  # read from the model's config.json
    HEADERS = "headers"  # read from safetensors headers / index metadata
    ENGINE_RULE = "engine rule"  # computed by a rule that mirrors the engine
    MEASURED = "measured"  # read off a boot log or a benchmark
    ESTIMATE = "estimate"  # a planner estimate, not an engine rule
    INPUT = "input"  # a number the user gave the tool (budget, GPU memory)


@dataclass(frozen=True, kw_only=True)
class Sourced:
    """A value with its source and a short note naming the field, flag or engine rule."""

    value: Any
    source: Source
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        out = {"value": self.value, "source": self.source.value}
        if self.note:
            out["note"] = self.note
        return out
