"""What vLLM checks between parsing a launch and serving its first request, in its order, with its own messages:
the model length against the config's limit (config/model.py::_get_and_verify_max_len), the free memory the
requested utilization needs (v1/worker/utils.py::request_memory), the memory left for cache blocks and for one
request of max_model_len (the KV planning's checks, engine/vllm/planning.py), and, under full CUDA graphs, one Mamba
cache block per decode sequence (config/compilation.py::CompilationConfig.resolve_cudagraph_mode_and_sizes), and how
much of the planned memory those last two checks can lose to a host that shares the card's memory. Pure functions:
the serving side hands in the config's length keys, the card's free memory and the planned blocks."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hybridplan.errors import BadInput, EngineRefusal

GIB = 1 << 30

# transformers_utils/model_arch_config_convertor.py::derive_max_model_len_and_key: the smallest of these the text
# config states, unless it states model_max_length (which then wins)
LENGTH_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
               "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")
# config/model.py::_get_and_verify_max_len: RoPE types whose max_position_embeddings is already scaled
_SCALED_ROPE = ("su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling")
MAX_LEN_RULE = "config/model.py::_get_and_verify_max_len"
REQUEST_MEMORY_RULE = "v1/worker/utils.py::request_memory"
MAMBA_BLOCKS_RULE = "config/compilation.py::CompilationConfig.resolve_cudagraph_mode_and_sizes"

# CUDAGraphMode names, and which of them capture full graphs (the Mamba-block check applies to those)
CUDAGRAPH_MODES = ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
_FULL = ("FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
# config/vllm.py::OPTIMIZATION_LEVEL_0x: the cudagraph_mode each -O level sets (2, the default, and 3: full)
_LEVEL_MODE = {0: "NONE", 1: "PIECEWISE", 2: "FULL_AND_PIECEWISE", 3: "FULL_AND_PIECEWISE"}


@dataclass(frozen=True, kw_only=True)
class ModelLength:
    """The length vLLM derives from the model's config (before the user's --max-model-len), and the key it names."""

    derived: int
    key: str | None
    model_max_length: int | None  # the config's own override, which may exceed the derived length


def model_length(text: Mapping[str, Any]) -> ModelLength | None:
    """The derived max_model_len of a text config; None when it states none of the keys (vLLM then takes the
    user's length or 2048)."""
    found = {k: text[k] for k in LENGTH_KEYS if isinstance(text.get(k), (int, float)) and not isinstance(text.get(k), bool)}
    if not found:
        return None
    key = min(found, key=lambda k: (found[k], LENGTH_KEYS.index(k)))
    derived = float(found[key])
    if "model_max_length" in found and found["model_max_length"]:
        key, derived = "model_max_length", float(found["model_max_length"])
    factor = 1.0
    for rope in _rope_parameters(text):
        if rope.get("rope_type", rope.get("type")) not in _SCALED_ROPE:
            raw = rope.get("factor", factor)
            factor = 1.0 if raw is None else float(raw)
    model_max = text.get("model_max_length")
    return ModelLength(derived=int(derived * factor), key=key,
                       model_max_length=int(model_max) if isinstance(model_max, (int, float)) else None)


def _rope_parameters(text: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The config's RoPE parameter sets (rope_scaling or rope_parameters, one or per layer type)."""
    out: list[Mapping[str, Any]] = []
    for key in ("rope_parameters", "rope_scaling"):
        value = text.get(key)
        if isinstance(value, Mapping):
            nested = [v for v in value.values() if isinstance(v, Mapping)]
            out += nested if nested and "rope_type" not in value and "type" not in value else [value]
    return out


def check_model_length(asked: int, limit: ModelLength | None, env: Mapping[str, str]) -> None:
    """vLLM refuses a --max-model-len above the derived one (and above the config's model_max_length), unless
    VLLM_ALLOW_LONG_MAX_MODEL_LEN is set."""
    if limit is None or asked <= limit.derived:
        return
    if limit.model_max_length is not None and asked <= limit.model_max_length:
        return
    if env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "").strip().lower() in ("1", "true"):
        return
    raise EngineRefusal(
        f"User-specified max_model_len ({asked}) is greater than the derived max_model_len ({limit.key}="
        f"{float(limit.derived)} or model_max_length={limit.model_max_length} in model's config.json). To allow "
        "overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must "
        "be used with extreme caution. If the model uses relative position encoding (RoPE), positions exceeding "
        "derived_max_model_len lead to nan. If the model uses absolute position encoding, positions exceeding "
        "derived_max_model_len will cause a CUDA array out-of-bounds error.", rule=MAX_LEN_RULE)


def cudagraph_mode(values: Mapping[str, Any]) -> tuple[str, str]:
    """The CUDA-graph mode a launch resolves to, and why: none under --enforce-eager (config/vllm.py disables them),
    else the compilation config's cudagraph_mode, else the optimization level's (-O2, the default: full and
    piecewise). The attention backends these hybrids run on CUDA all support full decode graphs (their
    AttentionCGSupport is at least UNIFORM_BATCH), so the resolution keeps the requested mode."""
    if values.get("enforce_eager"):
        return "NONE", "--enforce-eager: config/vllm.py::VllmConfig disables CUDA graphs"
    cc = values.get("compilation_config")
    if isinstance(cc, str):
        try:
            cc = json.loads(cc)
        except ValueError:
            raise BadInput(f"--compilation-config: not a JSON object: {cc[:80]!r}") from None
    mode = cc.get("cudagraph_mode") if isinstance(cc, Mapping) else None
    if mode is not None:
        name = str(mode).rsplit(".", 1)[-1].upper()
        if name not in CUDAGRAPH_MODES:
            raise BadInput(f"--compilation-config: cudagraph_mode {mode!r} is not one of {', '.join(CUDAGRAPH_MODES)}")
        return name, "--compilation-config cudagraph_mode"
    raw = values.get("optimization_level", 2)
    try:
        level = int(str(raw).upper().removeprefix("O"))
    except ValueError:
        raise BadInput(f"--optimization-level: {raw!r} is not 0, 1, 2 or 3") from None
    if level not in _LEVEL_MODE:
        raise BadInput(f"--optimization-level: {raw!r} is not 0, 1, 2 or 3")
    return _LEVEL_MODE[level], f"optimization level {level} (config/vllm.py::OPTIMIZATION_LEVEL_0{level})"


def full_graphs(mode: str) -> bool:
    """Whether the mode captures full CUDA graphs (CUDAGraphMode.has_full_cudagraphs)."""
    return mode in _FULL


def check_mamba_blocks(max_num_seqs: int | None, num_blocks: int, mode: str) -> EngineRefusal | None:
    """Under full CUDA graphs each decode sequence needs one Mamba cache block: more max_num_seqs than planned blocks
    and vLLM refuses to capture (and so to start)."""
    if max_num_seqs is None or not full_graphs(mode) or max_num_seqs <= num_blocks:
        return None
    return EngineRefusal(
        f"max_num_seqs ({max_num_seqs}) exceeds available Mamba cache blocks ({num_blocks}). Each decode sequence "
        "requires one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most "
        f"{num_blocks} or increase gpu_memory_utilization.", rule=MAMBA_BLOCKS_RULE)


def check_free_memory(free_bytes: int, total_bytes: int, utilization: float, requested_bytes: int,
                      device: str = "cuda:0") -> EngineRefusal | None:
    """The worker refuses to start when less than the requested share of the card is free at startup."""
    if free_bytes >= requested_bytes:
        return None
    return EngineRefusal(
        f"Free memory on device {device} ({round(free_bytes / GIB, 2)}/{round(total_bytes / GIB, 2)} GiB) on startup "
        f"is less than desired GPU memory utilization ({utilization}, {round(requested_bytes / GIB, 2)} GiB). "
        "Decrease GPU memory utilization or reduce GPU memory used by other processes.", rule=REQUEST_MEMORY_RULE)



@dataclass(frozen=True, kw_only=True)
class HostGrowthSlack:
    """How much the KV memory may shrink before each check that passed on it refuses, in vLLM's order."""

    slack: tuple[tuple[str, int], ...]  # (phase, bytes): kv_cache (one max_model_len request), cuda_graph (one Mamba
    #                                     cache block per decode sequence); bytes < 0: it refuses already

    @property
    def tolerated(self) -> int:
        """The most the memory may shrink with every check still passing."""
        return min(b for _, b in self.slack)

    def breaks(self, growth: float) -> tuple[str, int] | None:
        """The first check (phase, its slack) that refuses when the memory shrinks by `growth` bytes; None: none."""
        return next(((phase, b) for phase, b in self.slack if b < growth), None)


def host_growth_slack(available: int, bytes_per_block: int, blocks_per_request: int, hold_null_block: bool,
                      auto_fit: bool, max_num_seqs: int | None, mode: str) -> HostGrowthSlack | None:
    """What a planned pool can lose and still pass vLLM's checks after the profile. On an integrated card
    utils/mem_utils.py::MemorySnapshot.measure reads free memory as the host's available memory, so memory_profiling's
    non_torch_increase (after the profile less the worker's baseline snapshot) counts every byte the host took
    meanwhile, and gpu_worker.py::determine_available_memory takes it out of the KV memory byte for byte. The KV check
    needs one max_model_len request in the memory less the null block where the release holds it back (an auto-fit
    length shrinks instead: no refusal there); under full CUDA graphs num_blocks = memory // bytes_per_block must
    cover max_num_seqs. None: neither check applies."""
    slack: list[tuple[str, int]] = []
    if not auto_fit:
        held = bytes_per_block if hold_null_block else 0
        slack.append(("kv_cache", available - held - bytes_per_block * blocks_per_request))
    if max_num_seqs is not None and full_graphs(mode):
        slack.append(("cuda_graph", available - bytes_per_block * max_num_seqs))
    return HostGrowthSlack(slack=tuple(slack)) if slack else None
