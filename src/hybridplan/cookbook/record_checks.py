"""The engine model held to a page's measured records: `cookbook check` and the tests hold the model to every record
(`check`), and the calibration reads the margins they allow (`margin_interval`). What `plan` stays clear of, the
records that failed, it reads from the shipped table (cookbook.record_evidence.measured_failure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hybridplan.cookbook.engine_view import env_pairs
from hybridplan.cookbook.records import Record
from hybridplan.engine.api import LaunchCommand

if TYPE_CHECKING:
    from hybridplan.engine.api import Verdict

def commands(record: Record) -> list[tuple[str, LaunchCommand]]:
    """(label, command) for each launch a record stands for, with the record's env."""
    env = env_pairs(record.env, {})
    return [(label, LaunchCommand(env=env, argv=argv)) for label, argv in record.launches()]


@dataclass(frozen=True, kw_only=True)
class Check:
    """One launch of a record against the engine model's prediction."""

    record: Record
    label: str
    gpu: str
    verdict: Verdict | None  # None when the model cannot load the command
    error: str | None = None

    @property
    def agrees(self) -> bool:
        v = self.verdict
        if v is None:
            return False
        if self.record.outcome == "served":
            return v.serves
        if v.serves:
            return False
        return self.record.phase is None or _same_kind(self.record.phase, v.phase)

    def message(self) -> str:
        r, v = self.record, self.verdict
        said = f"{r.outcome}" + (f" ({r.phase})" if r.phase else "") + f" on build {r.build[:9]} ({r.source})"
        if v is None:
            return f"record {self.label}: the engine model cannot load it: {self.error}"
        predicted = "serves" if v.serves else f"fails ({v.phase})"
        return f"record {self.label} on {self.gpu}: measured {said}; the model predicts it {predicted}: {v.why}"


def _same_kind(recorded: str, predicted: str | None) -> bool:
    """Phases the model can tell apart: boot-time pools and weights vs runtime memory (capture, first request)."""
    boot = ("weights", "state_pool", "kv_pool")
    return (recorded in boot) == (predicted in boot)


def check(record: Record, gpu_id: str, version: str) -> list[Check]:
    """Predict every launch of a record on its card."""
    from hybridplan.errors import HybridPlanError
    from hybridplan.hardware.catalog import lookup
    from hybridplan.engine.api import load
    from hybridplan.engine.api import for_loaded
    from hybridplan.engine.api import predict

    card = lookup(gpu_id)
    out: list[Check] = []
    for label, command in commands(record):
        try:
            loaded = load(command, platform=card.platform(), version=version)
            tl, _ = for_loaded(loaded, gpu=card)
            v = predict(loaded, tl, request_tokens=record.request_tokens, concurrency=record.concurrency)
            out.append(Check(record=record, label=label, gpu=card.name, verdict=v))
        except HybridPlanError as exc:
            out.append(Check(record=record, label=label, gpu=card.name, verdict=None, error=exc.message))
    return out


def margin_interval(checks: list[Check], margin_gib: float) -> tuple[float, float]:
    """The margins (GiB) that keep every runtime verdict of `checks` as recorded, given the margin they were
    predicted with: a served launch bounds it from above (slack - need), a launch that ran out of memory at capture or
    on the first request from below. (-inf, inf) sides mean no record bounds it."""
    lo, hi = float("-inf"), float("inf")
    for c in checks:
        v = c.verdict
        if v is None or v.figure("serve_need_gib") is None or v.figure("slack_gib") is None:
            continue  # failed before the runtime phases: the margin does not decide it
        room = v.figure("slack_gib") - (v.figure("serve_need_gib") - margin_gib)  # slack left beyond the predicted need
        if c.record.outcome == "served":
            hi = min(hi, room)
        elif c.record.phase in ("cuda_graph", "first_request"):
            lo = max(lo, room)
    return lo, hi
