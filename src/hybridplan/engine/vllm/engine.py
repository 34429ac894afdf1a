"""The modelled vLLM releases (0.33.0, 0.24.0, 0.20.1, 0.20.0) behind the engine API (`engine.for_engine("vllm", version)`)."""

from __future__ import annotations

from dataclasses import dataclass

from hybridplan.engine.flags import FlagRegistry
from hybridplan.engine.vllm import command, planning
from hybridplan.engine.vllm.behaviours import RELEASES
from hybridplan.errors import BadInput
from hybridplan.models.geometry import ModelGeometry

SUPPORTED = tuple(RELEASES)  # oldest first; the last is the default


@dataclass(frozen=True)
class VllmEngine:
    """One vLLM release: parse a launch (or its non-default args line), resolve it, plan the KV cache."""

    version: str

    @property
    def name(self) -> str:
        return "vllm"

    @property
    def rules_package(self) -> str:
        return __package__ or "hybridplan.engine.vllm"

    def registry(self) -> FlagRegistry:
        return command.registry(self.version)

    def parse_command(self, text: str) -> command.VllmCommand:
        return command.parse_command(text, self.version)

    def resolve(self, cmd: command.VllmCommand, geo: ModelGeometry, sm: int | None = 90,
                total_memory_bytes: int | None = None, device_name: str = "",
                cuda_runtime_major: int = 12) -> planning.VllmArgs:
        return planning.resolve(cmd.values, geo, sm=sm, total_memory_bytes=total_memory_bytes,
                                device_name=device_name, cuda_runtime_major=cuda_runtime_major,
                                release=RELEASES[self.version])

    def layout(self, args: planning.VllmArgs, geo: ModelGeometry) -> planning.KVLayout:
        return planning.layout(args, geo)

    def plan(self, args: planning.VllmArgs, geo: ModelGeometry, available_memory: int) -> planning.KVPlan:
        return planning.plan(args, geo, available_memory)


def engine_for(version: str | None) -> VllmEngine:
    """The modelled vLLM release; BadInput names the supported ones."""
    v = version or SUPPORTED[-1]
    if v not in SUPPORTED:
        raise BadInput(f"--engine-version: vLLM {v} is not modelled (supported: {', '.join(SUPPORTED)})")
    return VllmEngine(v)
