"""Version-neutral engine results: resolved arguments, the pool budget, pool sizing, state allocation, refusals.

Every engine version returns these types; each carries its provenance (the rule or branch that produced it, the
engine version that sized it). Resolved arguments (`EngineArgs`, `Arg`) and refusals (`EngineRefusal`) are already
version-neutral and are re-exported from where they live.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hybridplan.engine.sglang.args import Arg, EngineArgs, Platform
from hybridplan.errors import EngineRefusal

__all__ = ["Arg", "EngineArgs", "EngineRefusal", "KVCell", "Platform", "PoolBudget", "PoolSizing", "RequestCap",
           "StateAllocation", "StatePlan"]


@dataclass(frozen=True, kw_only=True)
class KVCell:
    """KV bytes per token on one rank: the target's full-attention layers plus the draft KV folded in."""

    target: int  # this stage's full-attention layers (the smallest stage's T wins across PP)
    draft: int  # the draft pool's bytes per token the engine adds to the target cell
    total: int
    layers: int
    kv_dtype: str
    draft_rule: str
    draft_dtype: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "draft": self.draft, "total": self.total, "layers": self.layers,
                "kv_dtype": self.kv_dtype, "draft_rule": self.draft_rule}



@dataclass(frozen=True, kw_only=True)
class StatePlan:
    """What _handle_max_mamba_cache decides: K, the branch, the bytes it charges, and the KV budget left."""

    max_mamba_cache_size: int  # K per attention-DP rank
    branch: str  # "max_mamba_cache_size" | "max_running_requests" | "ratio"
    per_slot: int  # stage_per_req
    extra_per_slot: int
    replayssm_fixed: int
    replayssm_ring_per_req: int
    spec_rows: int  # capped requests + 1 the verify scratch is reserved for (0 if none)
    spec_scratch_bytes: int
    state_bytes: int  # (K + 1) x (per_slot + extra) + fixed
    rest_before_gib: float
    kv_budget_gib: float  # total_rest_memory after the state (and scratch) subtraction
    ratio: float | None
    state_budget_bytes: float | None  # B = rest x r/(1+r) x 2^30 on the ratio branch



@dataclass(frozen=True, kw_only=True)
class RequestCap:
    """resolve_max_num_reqs: the final max running requests per DP worker and what bound it."""

    max_running_requests: int
    requested: int | None
    estimated: int
    kv_cap: int  # T // 2
    state_cap: int  # K // S
    binding: str  # state_pool | kv_pool | max_running_requests | context_estimate
    warnings: tuple[str, ...]



@dataclass(frozen=True, kw_only=True)
class PoolSizing:
    """What the engine allocates on one rank for this command and pool budget."""

    slots_per_request: int  # S
    draft_states_per_request: int  # D reserved per request (0 under ReplaySSM / no spec)
    state_bytes_per_slot: int  # per-slot bytes over all state layers (global, per state-TP rank)
    cell: KVCell
    state: StatePlan
    max_total_num_tokens: int
    requests: RequestCap
    kv_budget_bytes: int
    engine_version: str  # the engine release whose rules sized this (provenance)
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def max_mamba_cache_size(self) -> int:
        return self.state.max_mamba_cache_size

    @property
    def max_running_requests(self) -> int:
        return self.requests.max_running_requests


@dataclass(frozen=True, kw_only=True)
class PoolBudget:
    """The engine's `total_rest_memory` (GiB) and, when known, the profile it came from (A and P, GiB)."""

    rest_gib: float
    available_gib: float | None = None  # A: free memory when the KV pool is sized
    pre_load_gib: float | None = None  # P: pre_model_load_memory



@dataclass(frozen=True, kw_only=True)
class StateAllocation:
    """Bytes the MambaPool allocates on rank 0 (stage 0): main state and the verify scratch."""

    conv_bytes: int
    ssm_bytes: int
    intermediate_ssm_bytes: int | None  # None when no verify scratch is allocated at all
    intermediate_conv_window_bytes: int | None
