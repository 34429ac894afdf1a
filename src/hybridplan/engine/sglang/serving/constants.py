"""The planner's estimate constants as data (data/planner_constants.yaml): defaults, per-GPU overrides, provenance.

`constants_for(gpu_id)` gives the values the planner uses on a card; calibration substitutes fitted values with
`PlannerConstants.with_values(...)` and passes the result to the timeline (`timeline.build(..., constants=...)`).
`constants_for(gpu_id, host=name)` adds a named host's overlay (`hosts:` in the data file): how a unified-memory
host meets memory pressure is the host's, not the card's (the stock host swaps, an earlyoom host kills).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any

from hybridplan.errors import BadInput

DATA_FILE = "planner_constants.yaml"


@dataclass(frozen=True, kw_only=True)
class PlannerConstants:
    """Every number the planner estimates rather than derives from an engine rule (units in the field names)."""

    driver_reserve_mib: float
    context_gib_single: float
    context_gib_nccl: float
    context_gib_nccl_per_rank: float
    unified_host_gib: float
    unified_oom_reserve_fraction: float
    unified_runtime_host_gib: float
    cublas_workspace_mib: float
    graph_shape_mib: float
    activation_fragmentation: float
    sampling_copies: float
    nccl_mib_per_rank: float
    unknown_attention_workspace_mib: float
    mamba2_chunk_size: int
    headroom_offset_gib: float
    block_draft_runner_gib: float
    margin_gib: float
    notes: tuple[tuple[str, str], ...] = ()  # (field, where the value comes from)
    origin: str = "defaults"  # "defaults", "defaults + gpus.<id>", or what a caller substituted

    def note(self, name: str) -> str:
        return dict(self.notes).get(name, "")

    def with_values(self, origin: str, **values: float) -> "PlannerConstants":
        """The same constants with some replaced (e.g. calibration's fitted values); `origin` says by what."""
        unknown = set(values) - set(value_names())
        if unknown:
            raise BadInput(f"unknown planner constant(s): {', '.join(sorted(unknown))}")
        notes = dict(self.notes)
        notes.update({k: f"{origin}: {v}" for k, v in values.items()})
        changed: dict[str, Any] = dict(values)  # names checked above; every constant is a number
        return replace(self, **changed, notes=tuple(notes.items()), origin=origin)

    def as_dict(self) -> dict[str, Any]:
        return {"origin": self.origin,
                "values": {n: {"value": getattr(self, n), "note": self.note(n)} for n in value_names()}}


def value_names() -> tuple[str, ...]:
    """The constant fields (not the bookkeeping ones), in declaration order."""
    return tuple(f.name for f in fields(PlannerConstants) if f.name not in ("notes", "origin"))


def _entries(raw: object, where: str) -> dict[str, tuple[float, str]]:
    if raw is not None and not isinstance(raw, dict):
        raise BadInput(f"{DATA_FILE}: {where}: expected a mapping of planner constants")
    out: dict[str, tuple[float, str]] = {}
    for name, entry in (raw or {}).items():
        if name not in value_names():
            raise BadInput(f"{DATA_FILE}: {where}.{name}: unknown planner constant")
        if not isinstance(entry, dict) or not isinstance(entry.get("value"), (int, float)):
            raise BadInput(f"{DATA_FILE}: {where}.{name}: expected {{value: <number>, note: <text>}}")
        out[name] = (entry["value"], str(entry.get("note", "")))
    return out


@lru_cache(maxsize=1)
def _load() -> tuple[dict[str, tuple[float, str]], dict[str, dict[str, tuple[float, str]]]]:
    from hybridplan.packaged import data_yaml

    data = data_yaml(DATA_FILE) or {}
    from hybridplan.hardware.catalog import driver_reserve

    defaults = {"driver_reserve_mib": driver_reserve(), **_entries(data.get("defaults"), "defaults")}
    missing = set(value_names()) - set(defaults)
    if missing:
        raise BadInput(f"{DATA_FILE}: defaults lack {', '.join(sorted(missing))}")
    per_gpu = {gpu: _entries(raw, f"gpus.{gpu}") for gpu, raw in (data.get("gpus") or {}).items()}
    return defaults, per_gpu


@lru_cache(maxsize=1)
def _hosts() -> dict[str, dict[str, tuple[float, str]]]:
    """The named host overlays (`hosts:`), each a mapping of planner constants like a GPU's."""
    from hybridplan.packaged import data_yaml

    raw = (data_yaml(DATA_FILE) or {}).get("hosts") or {}
    if not isinstance(raw, dict):
        raise BadInput(f"{DATA_FILE}: hosts: expected a mapping of host name -> planner constants")
    return {name: _entries(entries, f"hosts.{name}") for name, entries in raw.items()}


def host_names() -> tuple[str, ...]:
    """The hosts a launch can name (besides the stock host the defaults describe)."""
    return tuple(_hosts())


def constants_for(gpu_id: str | None = None, host: str | None = None) -> PlannerConstants:
    """The defaults, with the GPU's overrides from the data file when it has any, and the named host's on top."""
    defaults, per_gpu = _load()
    merged = dict(defaults)
    override = per_gpu.get(gpu_id or "", {})
    merged.update(override)
    origin = f"defaults + gpus.{gpu_id}" if override else "defaults"
    if host is not None:
        if host not in _hosts():
            raise BadInput(f"unknown host {host!r}: {', '.join(host_names()) or 'none'} (data/{DATA_FILE} hosts)")
        merged.update(_hosts()[host])
        origin += f" + hosts.{host}"
    values: dict[str, Any] = {k: (int(v) if k == "mamba2_chunk_size" else float(v)) for k, (v, _) in merged.items()}
    return PlannerConstants(**values, notes=tuple((k, note) for k, (_, note) in merged.items()), origin=origin)
