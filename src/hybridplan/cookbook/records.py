"""A page's measured records as data: commands that served or failed on a card, with the phase, build and source.

A record is one launch (or a sweep of one flag's values) exactly as measured; cookbook.record_checks holds the engine
model to them and tells `plan` which settings they show failing.
"""

from __future__ import annotations

import shlex
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, model_validator

PHASES = ("weights", "state_pool", "kv_pool", "cuda_graph", "first_request")
MAX_SWEEP = 64  # values one record may sweep


class Sweep(BaseModel):
    """One flag measured at several values, every one with the record's outcome."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    flag: str = Field(pattern=r"^--[a-z0-9-]+$")
    values: list[str] = Field(min_length=1, max_length=MAX_SWEEP)


class Record(BaseModel):
    """One measured launch on one of the page's cards."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    hw: str
    command: str = Field(min_length=1, max_length=4096)  # the flags as launched (no placeholders)
    env: list[str] = Field(default_factory=list, max_length=32)
    sweep: Optional[Sweep] = None
    outcome: Literal["served", "failed"]
    phase: Optional[Literal["weights", "state_pool", "kv_pool", "cuda_graph", "first_request"]] = None
    build: str = Field(min_length=1)
    request_tokens: int = Field(gt=0, le=1 << 24)
    concurrency: int = Field(default=1, gt=0, le=1 << 16)
    source: str = Field(min_length=1)
    note: str = ""

    @model_validator(mode="after")
    def _phase_only_for_failures(self) -> Record:
        if self.phase is not None and self.outcome != "failed":
            raise ValueError("phase is only given for a failed record")
        return self

    def launches(self) -> list[tuple[str, tuple[str, ...]]]:
        """(label, argv) for each launch the record stands for: one, or one per swept value."""
        argv = tuple(shlex.split(self.command))
        if self.sweep is None:
            return [(self.id, argv)]
        out = []
        for v in self.sweep.values:
            kept: list[str] = []
            skip = False
            for tok in argv:
                if skip:
                    skip = False
                elif tok == self.sweep.flag:
                    skip = True
                elif not tok.startswith(self.sweep.flag + "="):
                    kept.append(tok)
            out.append((f"{self.id}@{v}", tuple(kept) + (self.sweep.flag, v)))
        return out
