"""The modelled vLLM releases (every release from 0.20.0 to 0.34.0, engine/vllm/behaviours.py) behind the engine API
(`engine.for_engine("vllm", version)`); any other vLLM version string is modelled by a release (engine/vllm/versions.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from hybridplan.engine.registry import FlagRegistry
from hybridplan.engine.vllm import command, planning
from hybridplan.engine.vllm.behaviours import RELEASES
from hybridplan.engine.vllm.startup import ModelLength
from hybridplan.engine.vllm.versions import resolve
from hybridplan.models.geometry import ModelGeometry

SUPPORTED = tuple(RELEASES)  # oldest first
# The release a launch is modelled by when none is named: 0.33.0, not the newest. 0.34.0's planning is modelled (and
# conformant), but its extensible KV cache sizes the pool from the memory left after CUDA graph capture and warmup at
# gpu_memory_utilization 1.0, which the card-alone memory estimate (planner/vllm_memory.py) has no public boot log
# calibrated on yet.
DEFAULT = "0.33.0"
NAME = "vllm"  # the engine these releases are (engine.api.engines())


@dataclass(frozen=True)
class VllmEngine:
    """One vLLM release: parse a launch (or its non-default args line), resolve it, plan the KV cache."""

    version: str
    note: str | None = None  # how the version asked for is modelled by this release (None: it is this release)

    @property
    def name(self) -> str:
        return NAME

    @property
    def rules_package(self) -> str:
        return __package__ or "hybridplan.engine.vllm"

    def registry(self) -> FlagRegistry:
        return command.registry(self.version)

    @property
    def prefix_caching_off(self) -> str:
        """The release's own flag that turns prefix caching off (--no-enable-prefix-caching before 0.33.0)."""
        return "--disable-prefix-caching" if self.registry().knows("--disable-prefix-caching") \
            else "--no-enable-prefix-caching"

    def parse_command(self, text: str) -> command.VllmCommand:
        return command.parse_command(text, self.version)

    def resolve(self, cmd: command.VllmCommand, geo: ModelGeometry, sm: int | None = 90,
                total_memory_bytes: int | None = None, device_name: str = "",
                cuda_runtime_major: int = 12, model_length: ModelLength | None = None) -> planning.VllmArgs:
        """The release's resolution on a card; `model_length` is the config's derived limit (startup.model_length;
        without it the geometry's context length stands in, unchecked)."""
        args = planning.resolve(cmd.values, geo, sm=sm, total_memory_bytes=total_memory_bytes,
                                device_name=device_name, cuda_runtime_major=cuda_runtime_major,
                                release=RELEASES[self.version], model_length=model_length, env=dict(cmd.env))
        return replace(args, notes=(self.note, *args.notes)) if self.note else args

    def layout(self, args: planning.VllmArgs, geo: ModelGeometry) -> planning.KVLayout:
        return planning.layout(args, geo)

    def plan(self, args: planning.VllmArgs, geo: ModelGeometry, available_memory: int) -> planning.KVPlan:
        return planning.plan(args, geo, available_memory)

    def provenance(self) -> dict[str, str]:
        """The vLLM function behind each planned quantity, in this release's own files."""
        release = RELEASES[self.version]
        module = release.planning_module
        return {
            "block_size": "platforms/interface.py::Platform._align_hybrid_block_size",
            "padding_pct": "platforms/interface.py::Platform._align_hybrid_block_size (the state page padded to the "
                           "attention page)",
            "attention_backend": "platforms/cuda.py::CudaPlatform.get_attn_backend_cls (its kernel blocks bound "
                                 "block_size)",
            "mamba_block_size": "model_executor/models/config.py::MambaModelConfig.verify_and_update_config",
            "mamba_cache_mode": "model_executor/models/config.py::MambaModelConfig.verify_and_update_config",
            "pages": "v1/kv_cache_interface.py::AttentionSpec/MambaSpec.page_size_bytes",
            "groups": f"{module}::_get_kv_cache_groups_uniform_page_size",
            "num_blocks": f"{module}::get_kv_cache_configs (available // bytes_per_block)",
            "max_model_len": f"{module}::_auto_fit_max_model_len",
            "kv_cache_tokens": release.capacity_rule,
            "max_concurrency": "v1/core/kv_cache_utils.py::get_max_concurrency_for_kv_cache_config",
            "state_pages_per_request": "v1/kv_cache_interface.py::MambaSpec.max_memory_usage_bytes",
        }


def for_version(version: str | None = None) -> VllmEngine:
    """The modelled vLLM release for a version string: the newest when None, a dev, rc, post or unmodelled build by
    the newest modelled release not newer than it (with a note); BadInput only for a string that is no version."""
    if version is None:
        return VllmEngine(DEFAULT)
    resolved = resolve(version, SUPPORTED)
    return VllmEngine(resolved.release, note=resolved.note)
