"""Public launches in the fleet's layouts (data/fleet_launches.yaml), held against the engine model: each launch
resolves under the modelled release, and where its log prints a rank's pools the model's per-rank numbers must
give them (a KV pool's K size from its token count and the layout's KV bytes per token)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from hybridplan.errors import BadInput

DATA_FILE = "fleet_launches.yaml"
GIB = 1 << 30
_FIELDS = {"id", "url", "layout", "model", "command", "note", "logged"}


@dataclass(frozen=True, kw_only=True)
class FleetLaunch:
    """One public launch in a fleet layout and what its log prints of one rank's pools."""

    id: str
    url: str
    layout: str
    model: str
    command: str
    note: str
    logged: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class Check:
    """A launch against the model: what it resolves to per rank, and whether it gives what the log printed."""

    launch: FleetLaunch
    slots_per_request: int
    kv_bytes_per_token: int
    predicted: dict[str, float]  # the logged keys as the model gives them
    agrees: bool | None  # None: the log shows no pool to hold it against


@lru_cache(maxsize=1)
def load() -> tuple[FleetLaunch, ...]:
    """The records, schema-checked (unknown keys and missing fields are errors)."""
    from hybridplan.packaged import data_yaml

    out = []
    for raw in (data_yaml(DATA_FILE) or {}).get("launches", []):
        extra = set(raw) - _FIELDS
        if extra or not _FIELDS - {"logged"} <= set(raw):
            raise BadInput(f"{DATA_FILE}: record {raw.get('id')!r} has unknown or missing fields ({sorted(extra)})")
        out.append(FleetLaunch(id=raw["id"], url=raw["url"], layout=raw["layout"], model=raw["model"],
                               command=raw["command"], note=" ".join(str(raw["note"]).split()),
                               logged=dict(raw.get("logged") or {})))
    return tuple(out)


def check(launch: FleetLaunch) -> Check:
    """The launch resolved by the modelled release (no card: the per-rank geometry the log's pools follow)."""
    from hybridplan.engine.api import explain

    d = explain(f"python -m sglang.launch_server --model-path {launch.model} {launch.command}")
    cell = int(d["kv_bytes_per_token"])
    predicted: dict[str, float] = {}
    if "kv_tokens" in launch.logged:  # K is half the cell: K and V of every full-attention layer on the rank
        predicted["k_gib"] = round(launch.logged["kv_tokens"] * cell / 2 / GIB, 2)
    agrees = None if not predicted else all(predicted[k] == launch.logged[k] for k in predicted)
    return Check(launch=launch, slots_per_request=int(d["slots_per_request"]), kv_bytes_per_token=cell,
                 predicted=predicted, agrees=agrees)
