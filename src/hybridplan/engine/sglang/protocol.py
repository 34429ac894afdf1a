"""The rule surface of an sglang release (`for_engine("sglang", v)`): two pools fixed at startup (S, D, the state
pool, the KV pool); `engine.api` re-exports it for the layers above."""

from __future__ import annotations

from typing import Protocol

from hybridplan.engine.sglang.args import EngineArgs, Platform
from hybridplan.engine.sglang.command import LaunchCommand
from hybridplan.engine.registry import ParsedFlags
from hybridplan.engine.release import EngineRelease
from hybridplan.engine.sglang.types import KVCell, PoolBudget, PoolSizing, RequestCap, StateAllocation, StatePlan
from hybridplan.models.geometry import DraftGeometry, ModelGeometry


class Engine(EngineRelease, Protocol):
    """One sglang release's semantics: parse and resolve a command, size the pools, predict the boot-log lines."""

    # --- the command line

    def parse(self, command: LaunchCommand) -> ParsedFlags:
        """Parse the argv as the release's argparse does; errors carry its `prog: error:` prefix."""
        ...

    def resolve(self, command: LaunchCommand, geo: ModelGeometry, draft: DraftGeometry | None = None,
                platform: Platform | None = None) -> EngineArgs:
        """The arguments after the release's resolution pipeline; refusals raise EngineRefusal."""
        ...

    # --- geometry per rank

    def slots_per_request(self, args: EngineArgs) -> int:
        """S: state slots per running request."""
        ...

    def draft_states_per_request(self, args: EngineArgs, geo: ModelGeometry) -> int:
        """D: verify states the state pool reserves per request."""
        ...

    def state_tp(self, args: EngineArgs, geo: ModelGeometry) -> int:
        """The TP width that shards the state."""
        ...

    def pp_stages(self, args: EngineArgs, geo: ModelGeometry) -> list[tuple[int, int]]:
        """[start, end) layer ranges of each pipeline stage."""
        ...

    def pp_layer_scale(self, args: EngineArgs, geo: ModelGeometry) -> float:
        """The largest stage's share of the state layers."""
        ...

    def stage_per_req(self, args: EngineArgs, geo: ModelGeometry) -> int:
        """One slot's state bytes on the largest pipeline stage (what the state pool charges per slot)."""
        ...

    def replayssm_active(self, args: EngineArgs, geo: ModelGeometry) -> bool:
        """Whether ReplaySSM spec-verify replaces the verify scratch."""
        ...

    def replayssm_ring_bytes(self, args: EngineArgs, geo: ModelGeometry, record_len: int | None = None) -> int:
        """One request's ReplaySSM ring over all state layers, in the release's layout and length (record_len:
        the ring length, default the one the release sizes)."""
        ...

    def ring_charges(self, args: EngineArgs, geo: ModelGeometry) -> tuple[int, int]:
        """The ReplaySSM ring as the state pool charges it: (bytes on every state slot, bytes reserved once), in the
        release's layout (per slot before 0.5.20, a fixed mrr/dp + 1 rings from then on for GDN)."""
        ...

    def reserves_spec_state(self, args: EngineArgs, geo: ModelGeometry) -> bool:
        """Whether the state pool reserves D verify states per request."""
        ...

    def kv_cell(self, args: EngineArgs, geo: ModelGeometry, draft: DraftGeometry | None, *, stage: int = 0) -> KVCell:
        """KV bytes per token of one pipeline stage, the draft's KV folded in."""
        ...

    def binding_cell(self, args: EngineArgs, geo: ModelGeometry, draft: DraftGeometry | None) -> KVCell:
        """The stage cell that bounds the KV tokens."""
        ...

    # --- the pools

    def pool_budget(self, available_gib: float, pre_load_gib: float, args: EngineArgs,
                    pre_capture_reserve_gib: float | None = None) -> PoolBudget:
        """total_rest_memory from a memory profile (free after weights A, free before load P)."""
        ...

    def mm_reservation_gib(self, args: EngineArgs) -> float:
        """The multimodal runtime reservation taken from the pool budget."""
        ...

    def pre_capture_reserve_gib(self, args: EngineArgs, gpu_mem_mib: float | None) -> float | None:
        """The post-capture mode's slack floor, None when that mode is off."""
        ...

    @property
    def pre_capture_reserve_rule(self) -> str:
        """The engine function the pre-capture reserve mirrors."""
        ...

    def default_fraction_reserve_mib(self, args: EngineArgs, geo: ModelGeometry) -> tuple[float, str]:
        """The reserve behind the default --mem-fraction-static (without its floor), and how it adds up."""
        ...

    def state_plan(self, rest_gib: float, args: EngineArgs, geo: ModelGeometry, slots_per_request: int) -> StatePlan:
        """K, the branch and the state bytes the state pool takes from a budget."""
        ...

    def request_cap(self, tokens: int, max_mamba_cache_size: int, slots_per_request: int,
                    args: EngineArgs) -> RequestCap:
        """The max running requests per DP worker for T tokens and K state slots."""
        ...

    def size_pools(self, budget: PoolBudget | float, args: EngineArgs, geo: ModelGeometry,
                   draft: DraftGeometry | None = None) -> PoolSizing:
        """The whole sizing pipeline on a pool budget; refusals raise EngineRefusal."""
        ...

    def req_pool_guards(self, args: EngineArgs, geo: ModelGeometry) -> None:
        """The request pool's checks before it allocates (size_pools runs them last); refusals raise EngineRefusal."""
        ...

    def kv_bytes_allocated(self, tokens: int, args: EngineArgs, geo: ModelGeometry, layers: int) -> int:
        """Bytes the KV pool allocates for T tokens over `layers` full-attention layers."""
        ...

    def state_allocation(self, pools: PoolSizing, args: EngineArgs, geo: ModelGeometry) -> StateAllocation:
        """Bytes the state pool allocates on rank 0, as the boot log reports them."""
        ...

    # --- the boot log

    def predicted_lines(self, pools: PoolSizing, args: EngineArgs, geo: ModelGeometry) -> list[str]:
        """The pool lines rank 0's boot log prints for this sizing."""
        ...
