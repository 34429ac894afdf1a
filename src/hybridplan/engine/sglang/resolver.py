"""The mutable scratch of one argument resolution (sglang 0.5.23's model, a release's switches and flag registry),
shared by resolve.py and its hook modules."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from hybridplan.engine.sglang.args import Arg, Platform
from hybridplan.engine.sglang.command import LaunchCommand
from hybridplan.engine.sglang.behaviours import VERSIONS, Switches
from hybridplan.engine.sglang.flag_history import parse, registry
from hybridplan.errors import EngineRefusal
from hybridplan.models.geometry import DraftGeometry, ModelGeometry
from hybridplan.provenance import Source

REGISTRY_PACKAGE = "hybridplan.engine.sglang"

# The engine fields sizing reads (reported in `explain --json` `args`, in this order).
SIZING_FIELDS = (
    "model_path", "tp_size", "pp_size", "dp_size", "attn_dp_size", "attn_cp_size", "dcp_size",
    "mem_fraction_static", "max_running_requests", "max_total_tokens", "max_mamba_cache_size",
    "mamba_full_memory_ratio", "mamba_ssm_dtype", "mamba_radix_cache_strategy", "disable_radix_cache",
    "disable_overlap_schedule", "page_size", "chunked_prefill_size", "max_prefill_tokens", "context_length",
    "kv_cache_dtype", "dtype", "speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
    "speculative_num_draft_tokens", "speculative_draft_model_path", "speculative_dspark_block_size",
    "speculative_dflash_block_size", "speculative_draft_kv_cache_dtype", "speculative_draft_attention_backend",
    "speculative_adaptive", "enable_linear_replayssm_spec", "enable_linear_replayssm", "linear_replayssm_cache_len",
    "mamba_track_interval", "linear_attn_backend", "linear_attn_decode_backend", "linear_attn_verify_backend",
    "attention_backend", "disaggregation_mode", "cuda_graph_max_bs_decode", "mm_feature_transport",
    "language_model_only", "enable_multimodal", "enable_unified_memory", "enable_kv_cache_sharding",
    "enable_int8_mamba_checkpoint", "int8_mamba_ckpt_size", "uno_lora_path", "enable_dp_attention",
    "enable_dp_lm_head", "speculative_ngram_max_bfs_breadth", "disable_cuda_graph", "disable_decode_cuda_graph",
    "disable_prefill_cuda_graph", "cuda_graph_backend_decode", "cuda_graph_backend_prefill", "language_only",
    "prefill_attention_backend", "decode_attention_backend", "prefill_max_requests",
    "disaggregation_decode_enable_radix_cache", "disaggregation_decode_extra_slots", "disaggregation_transfer_backend",
)
@lru_cache(maxsize=64)
def _sizing_defaults(version: str) -> tuple[tuple[str, Arg], ...]:
    """The default Arg of each sizing field for a release, in SIZING_FIELDS order, built once per release (every
    resolution starts from them): its own default, else the newest registry's off value for a field it lacks."""
    reg, newest = registry(version), registry(VERSIONS[-1])
    out = []
    for dest in SIZING_FIELDS:
        if dest in reg.by_dest:
            out.append((dest, Arg(value=reg.default(dest), source=Source.DEFAULT)))
        elif dest in newest.by_dest:
            out.append((dest, Arg(value=newest.default(dest), source=Source.DEFAULT,
                                  rule=f"not a field of sglang {version}")))
    return tuple(out)


class Resolver:
    """Mutable scratch for one resolution; the result is frozen into EngineArgs."""

    def __init__(self, command: LaunchCommand, geo: ModelGeometry, draft: DraftGeometry | None, platform: Platform,
                 sw: Switches):
        reg = registry(sw.version)
        parsed = parse(sw.version, tuple(command.argv))
        self.reg = reg
        self.sw = sw
        self.geo = geo
        self.draft = draft
        self.platform = platform
        self.env = command.env_dict
        self.notes: list[str] = []
        self.args: dict[str, Arg] = {}
        for dest, value in parsed.values.items():
            self.args[dest] = Arg(value=value, source=Source.EXPLICIT, rule=parsed.spelled[dest])
        for dest, arg in _sizing_defaults(sw.version):
            if dest not in self.args:
                self.args[dest] = arg
        for dest in parsed.repeated:
            self.notes.append(f"{reg.option_for(dest)} is given more than once; the last value wins")

    def __getitem__(self, name: str) -> Any:
        return self.args[name].value

    def set(self, rule: str, **values: Any) -> None:
        """declare_resolution: record a derived value and the rule that wrote it."""
        for k, v in values.items():
            self.args[k] = Arg(value=v, source=Source.DERIVED, rule=rule)

    def set_default(self, rule: str, **values: Any) -> None:
        for k, v in values.items():
            self.args[k] = Arg(value=v, source=Source.DEFAULT, rule=rule)

    def explicit(self, name: str) -> bool:
        arg = self.args.get(name)
        return arg is not None and arg.source is Source.EXPLICIT

    def get_bool(self, name: str) -> bool:
        arg = self.args.get(name)
        return bool(arg.value) if arg is not None else False

    def refuse(self, message: str, rule: str, kind: str = "ValueError") -> EngineRefusal:
        return EngineRefusal(message, rule=rule, kind=kind)

    def env_str(self, name: str, default: str | None) -> str | None:
        return self.env.get(name, default)
