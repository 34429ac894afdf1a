"""sglang 0.5.18-0.5.23 behind the one engine API (hybridplan.engine.api.Engine): 0.5.23's model, parameterized by
a release's switches (engine/sglang/behaviours.py) and flag registry (engine/sglang/flag_history.py); each method delegates to the
module that mirrors the engine function."""

from __future__ import annotations

from hybridplan.engine.sglang.protocol import Engine
from hybridplan.engine.sglang.args import EngineArgs, Platform
from hybridplan.engine.sglang.command import LaunchCommand
from hybridplan.engine.sglang.behaviours import Switches, switches
from hybridplan.engine.sglang.flag_history import parse, registry
from hybridplan.engine.registry import FlagRegistry, ParsedFlags
from hybridplan.engine.sglang import budget, logs, memory_defaults, reserves, resolve, sizing
from hybridplan.engine.sglang.resolver import REGISTRY_PACKAGE
from hybridplan.engine.sglang.types import KVCell, PoolBudget, PoolSizing, RequestCap, StateAllocation, StatePlan
from hybridplan.models.geometry import DraftGeometry, ModelGeometry


class SglangRelease:
    """One release's implementation of hybridplan.engine.api.Engine: 0.5.23's rules with the release's switches."""

    name = "sglang"
    rules_package = REGISTRY_PACKAGE
    pre_capture_reserve_rule = reserves.RULE

    def __init__(self, sw: Switches):
        self.sw = sw
        self.version = sw.version

    def registry(self) -> FlagRegistry:
        return registry(self.version)

    def parse(self, command: LaunchCommand) -> ParsedFlags:
        return parse(self.version, tuple(command.argv))

    def resolve(self, command: LaunchCommand, geo: ModelGeometry, draft: DraftGeometry | None = None,
                platform: Platform | None = None) -> EngineArgs:
        return resolve.resolve(command, geo, self.sw, draft, platform)

    def slots_per_request(self, args: EngineArgs) -> int:
        return sizing.mamba_ratio(args)

    def draft_states_per_request(self, args: EngineArgs, geo: ModelGeometry) -> int:
        return sizing.draft_states_per_request(args, geo)

    def state_tp(self, args: EngineArgs, geo: ModelGeometry) -> int:
        return sizing.state_tp(args, geo)

    def pp_stages(self, args: EngineArgs, geo: ModelGeometry) -> list[tuple[int, int]]:
        return sizing.pp_stages(args, geo)

    def pp_layer_scale(self, args: EngineArgs, geo: ModelGeometry) -> float:
        return sizing.pp_layer_scale(args, geo)

    def stage_per_req(self, args: EngineArgs, geo: ModelGeometry) -> int:
        return sizing.stage_per_req(args, geo)

    def replayssm_active(self, args: EngineArgs, geo: ModelGeometry) -> bool:
        return sizing.replayssm_active(args, geo)

    def replayssm_ring_bytes(self, args: EngineArgs, geo: ModelGeometry, record_len: int | None = None) -> int:
        return sizing.replayssm_ring_bytes(args, geo, record_len)

    def ring_charges(self, args: EngineArgs, geo: ModelGeometry) -> tuple[int, int]:
        return sizing.ring_charges(args, geo)

    def reserves_spec_state(self, args: EngineArgs, geo: ModelGeometry) -> bool:
        return sizing.reserves_spec_state(args, geo)

    def kv_cell(self, args: EngineArgs, geo: ModelGeometry, draft: DraftGeometry | None, *, stage: int = 0) -> KVCell:
        return sizing.kv_cell(args, geo, draft, stage=stage)

    def binding_cell(self, args: EngineArgs, geo: ModelGeometry, draft: DraftGeometry | None) -> KVCell:
        return sizing.binding_cell(args, geo, draft)

    def pool_budget(self, available_gib: float, pre_load_gib: float, args: EngineArgs,
                    pre_capture_reserve_gib: float | None = None) -> PoolBudget:
        return budget.pool_budget(available_gib, pre_load_gib, args, pre_capture_reserve_gib)

    def mm_reservation_gib(self, args: EngineArgs) -> float:
        return budget.mm_reservation_gib(args)

    def pre_capture_reserve_gib(self, args: EngineArgs, gpu_mem_mib: float | None) -> float | None:
        return reserves.pre_capture_reserve_gib(args, gpu_mem_mib)

    def default_fraction_reserve_mib(self, args: EngineArgs, geo: ModelGeometry) -> tuple[float, str]:
        return memory_defaults.default_fraction_reserve_mib(args, geo)

    def state_plan(self, rest_gib: float, args: EngineArgs, geo: ModelGeometry, slots_per_request: int) -> StatePlan:
        return sizing.handle_max_mamba_cache(rest_gib, args, geo, slots_per_request)

    def request_cap(self, tokens: int, max_mamba_cache_size: int, slots_per_request: int,
                    args: EngineArgs) -> RequestCap:
        return sizing.resolve_max_num_reqs(tokens, max_mamba_cache_size, slots_per_request, args)

    def size_pools(self, budget: PoolBudget | float, args: EngineArgs, geo: ModelGeometry,
                   draft: DraftGeometry | None = None) -> PoolSizing:
        return sizing.size_pools(budget, args, geo, draft)

    def req_pool_guards(self, args: EngineArgs, geo: ModelGeometry) -> None:
        sizing.req_pool_guards(args, geo)

    def kv_bytes_allocated(self, tokens: int, args: EngineArgs, geo: ModelGeometry, layers: int) -> int:
        return sizing.kv_bytes_allocated(tokens, args, geo, layers)

    def state_allocation(self, pools: PoolSizing, args: EngineArgs, geo: ModelGeometry) -> StateAllocation:
        return logs.state_allocation(pools, args, geo)

    def predicted_lines(self, pools: PoolSizing, args: EngineArgs, geo: ModelGeometry) -> list[str]:
        return logs.predicted_lines(pools, args, geo)


def engine_for(version: str) -> Engine:
    """The engine API of `version` (one of behaviours.VERSIONS); mypy checks the class against the Protocol here."""
    return SglangRelease(switches(version))
