"""The engine model held to a page's measured records, and the records as bounds for `plan`.

`cookbook check` and the tests hold the model to every record (`check`), and `plan` never recommends a command a
record shows failing (`measured_failure`): a failure bounds the same settings in the direction that makes it worse (a
higher fraction or a larger prefill chunk for an out-of-memory at capture or on the first request, a lower fraction
for a pool too small).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from hybridplan.cookbook.engine_view import env_pairs
from hybridplan.cookbook.records import Record
from hybridplan.engine.api import LaunchCommand
from hybridplan.engine.api import MeasuredFailure

if TYPE_CHECKING:
    from hybridplan.engine.api import EngineArgs
    from hybridplan.engine.api import Verdict

# resolved arguments that must be equal for a record to speak for another command (the rest bound it monotonically)
SAME = ("model_path", "speculative_algorithm", "speculative_draft_model_path", "speculative_num_draft_tokens",
        "speculative_num_steps", "speculative_eagle_topk", "mamba_radix_cache_strategy", "mamba_ssm_dtype",
        "kv_cache_dtype", "max_running_requests", "cuda_graph_decode_max_bs", "tp_size", "pp_size", "page_size",
        "attention_backend", "context_length", "enable_linear_replayssm_spec")


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


def _num(args: EngineArgs, key: str) -> float:
    v = args.get(key)
    return float(v) if v is not None else 0.0


def bounds(failed_args: EngineArgs, failed_phase: str | None, args: EngineArgs) -> bool:
    """Whether a failed launch (its resolved args) shows that `args` fails too."""
    if any(failed_args.get(k) != args.get(k) for k in SAME):
        return False
    mfs, fmfs = _num(args, "mem_fraction_static"), _num(failed_args, "mem_fraction_static")
    if failed_phase in ("cuda_graph", "first_request"):
        return mfs >= fmfs and _num(args, "chunked_prefill_size") >= _num(failed_args, "chunked_prefill_size")
    if failed_phase in ("weights", "kv_pool"):
        return mfs <= fmfs
    same_split = all(failed_args.get(k) == args.get(k) for k in ("mamba_full_memory_ratio", "max_mamba_cache_size",
                                                                 "chunked_prefill_size"))
    return same_split and (mfs <= fmfs if failed_phase == "state_pool" else mfs == fmfs)


@lru_cache(maxsize=64)
def _failed_launches(gpu_id: str, version: str) -> tuple[tuple[Record, str, EngineArgs], ...]:
    """Every failed launch recorded on a card by the bundled pages, resolved once by `version`'s rules: a failure
    measured on a page's build bounds the same command under any modelled release (the card ran out all the same)."""
    from hybridplan.cookbook.pages import bundled_ids, load_page
    from hybridplan.errors import HybridPlanError
    from hybridplan.hardware.catalog import lookup
    from hybridplan.engine.api import load

    card = lookup(gpu_id)
    out: list[tuple[Record, str, EngineArgs]] = []
    for pid in bundled_ids():
        page = load_page(pid)
        gpus = {h.id: h.gpu for h in page.hardware}
        for r in page.records:
            if r.outcome != "failed" or gpus.get(r.hw) != gpu_id:
                continue
            for label, command in commands(r):
                try:
                    out.append((r, label, load(command, platform=card.platform(), version=version).args))
                except HybridPlanError:
                    continue
    return tuple(out)


def measured_failure(args: EngineArgs, gpu_id: str, version: str) -> MeasuredFailure | None:
    """The first bundled record that shows a command (its resolved args) failing on the card, as the planner takes
    it (planner.plan.FailureLookup): what `plan` must stay clear of."""
    for r, label, fargs in _failed_launches(gpu_id, version):
        if bounds(fargs, r.phase, args):
            return MeasuredFailure(label=label, phase=r.phase, build=r.build, source=r.source)
    return None


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
