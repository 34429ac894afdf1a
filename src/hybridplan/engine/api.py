"""The one engine API: what every modelled engine release offers the layers above.

`EngineRelease` is what every engine and release has (its name, version, rules package and flag registry).
`Engine` is an sglang release (`engine.for_version(v)`, or `for_engine("sglang", v)`): two pools fixed at startup
(S, D, the state pool, the KV pool). `HybridKVEngine` is a vLLM release (`for_engine("vllm", v)`): one paged pool
shared by attention KV and state. Callers outside `hybridplan.engine` go through these Protocols and the types of
`engine.types` (and the vLLM types re-exported here), never through an engine package (an import-linter contract in
pyproject.toml enforces it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, overload

from hybridplan.engine.args import EngineArgs, Platform
from hybridplan.engine.command import LaunchCommand
from hybridplan.engine.flags import FlagRegistry, ParsedFlags
from hybridplan.engine.types import KVCell, PoolBudget, PoolSizing, RequestCap, StateAllocation, StatePlan
from hybridplan.models.geometry import DraftGeometry, ModelGeometry

if TYPE_CHECKING:  # re-exported for callers' annotations: outside engine/ the vLLM types are named through this API
    from hybridplan.engine.vllm.command import VllmCommand as VllmCommand
    from hybridplan.engine.vllm.engine import VllmEngine
    from hybridplan.engine.vllm.planning import KVLayout as KVLayout, KVPlan as KVPlan, VllmArgs as VllmArgs


class EngineRelease(Protocol):
    """What every modelled engine release offers, whichever way it lays out memory."""

    @property
    def name(self) -> str:
        """The engine: "sglang" or "vllm"."""
        ...

    @property
    def version(self) -> str:
        """The release, e.g. "0.5.23" or "0.33.0"."""
        ...

    @property
    def rules_package(self) -> str:
        """The Python package whose functions mirror this release (conformance reports name rules under it)."""
        ...

    def registry(self) -> FlagRegistry:
        """The release's flag registry (its argparse options, defaults and choices)."""
        ...


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


class HybridKVEngine(EngineRelease, Protocol):
    """An engine whose hybrid models share one paged pool between attention KV and state (vLLM): parse its launch,
    resolve it, plan the pool from the available KV memory. Engine-neutral where `Engine` is sglang-shaped (S, D,
    the state pool, the ReplaySSM ring); `engine.for_engine("vllm", v)` returns one."""

    @property
    def prefix_caching_off(self) -> str:
        """The release's own flag that turns prefix caching off."""
        ...

    def parse_command(self, text: str) -> "VllmCommand":
        """A launch command or a boot log's `non-default args: {...}` line, by the release's parser."""
        ...

    def resolve(self, cmd: "VllmCommand", geo: ModelGeometry, sm: int | None = 90,
                total_memory_bytes: int | None = None, device_name: str = "",
                cuda_runtime_major: int = 12) -> "VllmArgs":
        """The release's resolution on a card (compute capability x10, torch's total memory, its name, the CUDA
        runtime: they pick the GDN prefill kernel and the batch defaults; None leaves those defaults open)."""
        ...

    def layout(self, args: "VllmArgs", geo: ModelGeometry) -> "KVLayout":
        """The block size, pages, groups and blocks per request, before any memory is known."""
        ...

    def plan(self, args: "VllmArgs", geo: ModelGeometry, available_memory: int) -> "KVPlan":
        """The groups, blocks, capacity and concurrency from the available KV memory (bytes)."""
        ...

    def provenance(self) -> dict[str, str]:
        """The vLLM file::function behind each planned quantity, in this release's own files."""
        ...


# each engine's releases module: SUPPORTED (its modelled releases, oldest first) and for_version(v)
_RELEASES = {"sglang": "hybridplan.engine.versions", "vllm": "hybridplan.engine.vllm.engine"}


def _releases_module(name: str) -> Any:
    """The module that knows engine `name`'s releases; BadInput names the modelled engines."""
    from importlib import import_module

    if name not in _RELEASES:
        from hybridplan.errors import BadInput

        raise BadInput(f"--engine: {name!r} is not modelled ({', '.join(_RELEASES)})")
    return import_module(_RELEASES[name])


def releases(name: str) -> tuple[str, ...]:
    """The releases of engine `name` hybridplan models, oldest first (the last is the default)."""
    return tuple(_releases_module(name).SUPPORTED)


@overload
def for_engine(name: Literal["sglang"], version: str | None = None) -> Engine: ...
@overload
def for_engine(name: Literal["vllm"], version: str | None = None) -> HybridKVEngine: ...
@overload
def for_engine(name: str, version: str | None = None) -> EngineRelease: ...
def for_engine(name: str, version: str | None = None) -> EngineRelease:
    """The engine API of `name` ("sglang" or "vllm") at `version` (default its newest modelled release)."""
    engine: EngineRelease = _releases_module(name).for_version(version)
    return engine


if TYPE_CHECKING:  # mypy checks each engine's release class against its Protocol (for_engine returns them untyped)
    _VLLM: type[HybridKVEngine] = VllmEngine
