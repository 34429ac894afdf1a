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

from hybridplan.models.geometry import ModelGeometry

if TYPE_CHECKING:  # re-exported for callers' annotations: outside engine/ the vLLM types are named through this API
    from hybridplan.engine.vllm.command import VllmCommand as VllmCommand
    from hybridplan.engine.vllm.engine import VllmEngine
    from hybridplan.engine.vllm.planning import KVLayout as KVLayout, KVPlan as KVPlan, VllmArgs as VllmArgs


from hybridplan.engine.release import EngineRelease as EngineRelease
from hybridplan.engine.types import Platform as Platform

# sglang's launch, resolved arguments and pool types, for the layers that work in its terms (the SGLang planner and
# cookbook pages); the neutral surfaces reach an engine through for_engine
from hybridplan.engine.sglang.args import Arg as Arg, EngineArgs as EngineArgs
from hybridplan.engine.sglang.behaviours import (Switches as Switches, check_version as check_version,
                                                 profile as profile)
from hybridplan.engine.sglang.command import LaunchCommand as LaunchCommand, parse_command as parse_command
from hybridplan.engine.sglang.types import (KVCell as KVCell, PoolBudget as PoolBudget, PoolSizing as PoolSizing,
                                            RequestCap as RequestCap, StateAllocation as StateAllocation,
                                            StatePlan as StatePlan)
from hybridplan.engine.sglang.protocol import Engine as Engine


class HybridKVEngine(EngineRelease, Protocol):
    """An engine whose hybrid models share one paged pool between attention KV and state (vLLM): parse its launch,
    resolve it, plan the pool from the available KV memory. Engine-neutral where `Engine` is sglang-shaped (S, D,
    the state pool, the ReplaySSM ring); `engine.for_engine("vllm", v)` returns one."""

    @property
    def prefix_caching_off(self) -> str:
        """The release's own flag that turns prefix caching off."""
        ...

    @property
    def note(self) -> str | None:
        """How the version asked for is modelled by this release (a dev or rc build, say); None when it is it."""
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


# each engine's releases module: SUPPORTED (its modelled releases, oldest first), DEFAULT and for_version(v)
_RELEASES = {"sglang": "hybridplan.engine.sglang.releases", "vllm": "hybridplan.engine.vllm.engine"}


def _releases_module(name: str) -> Any:
    """The module that knows engine `name`'s releases; BadInput names the modelled engines."""
    from importlib import import_module

    if name not in _RELEASES:
        from hybridplan.errors import BadInput

        raise BadInput(f"--engine: {name!r} is not modelled ({', '.join(_RELEASES)})")
    return import_module(_RELEASES[name])


def releases(name: str) -> tuple[str, ...]:
    """The releases of engine `name` hybridplan models, oldest first."""
    return tuple(_releases_module(name).SUPPORTED)


def default_release(name: str) -> str:
    """The release of engine `name` a launch is modelled by when none is named."""
    return str(_releases_module(name).DEFAULT)


@overload
def for_engine(name: Literal["sglang"], version: str | None = None) -> Engine: ...
@overload
def for_engine(name: Literal["vllm"], version: str | None = None) -> HybridKVEngine: ...
@overload
def for_engine(name: str, version: str | None = None) -> EngineRelease: ...
def for_engine(name: str, version: str | None = None) -> EngineRelease:
    """The engine API of `name` ("sglang" or "vllm") at `version` (default: default_release(name))."""
    engine: EngineRelease = _releases_module(name).for_version(version)
    return engine


if TYPE_CHECKING:  # mypy checks each engine's release class against its Protocol (for_engine returns them untyped)
    _VLLM: type[HybridKVEngine] = VllmEngine
