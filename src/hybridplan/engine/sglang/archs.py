"""Architecture lists of sglang 0.5.23 that decide speculative defaults, and the radix-cache gates over a release's
lists (engine/sglang/behaviours.py: mamba_radix_cache_archs, mamba_extra_buffer_archs)."""

from __future__ import annotations

from hybridplan.engine.sglang.behaviours import Switches

# configs/model_config.py::_config_draft_model: archs whose draft-mode config sets num_nextn_predict_layers = 1
DRAFT_MODE_ONE_NEXTN_LAYER = frozenset({
    "Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "InternS2PreviewForConditionalGeneration",
    "InternS2MobiusForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
    "NemotronH_Omni_Reasoning_V3", "Qwen3MoeForCausalLM", "HYV3ForCausalLM", "HYV4ForCausalLM",
    "ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM",
})

# arg_groups/speculative_hook.py::_handle_eagle_family: archs whose EAGLE draft path defaults to the model path
EAGLE_DRAFT_IS_MODEL = frozenset({
    "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV4ForCausalLM", "Glm4MoeForCausalLM",
    "Glm4MoeLiteForCausalLM", "GlmMoeDsaForCausalLM", "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM",
    "BailingMoeV2_5ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration",
    "HYV3ForCausalLM", "HYV4ForCausalLM", "Qwen4ExpForConditionalGeneration",
})

# arg_groups/speculative_hook.py::_auto_choose_speculative_params: (steps, topk, draft tokens)
EAGLE_AUTO_PARAMS = {
    "LlamaForCausalLM": (5, 4, 8),
    "Grok1ForCausalLM": (5, 4, 8),
    "Grok1VForCausalLM": (5, 4, 8),
}
EAGLE_AUTO_DEFAULT = (3, 1, 4)

# speculative/spec_info.py: built-in algorithm names (NEXTN is an alias of EAGLE)
SPEC_ALGORITHMS = ("EAGLE", "EAGLE3", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO", "FROZEN_KV_MTP")
SPEC_ALIASES = {"NEXTN": "EAGLE"}


def uses_mamba_radix_cache(architecture: str, has_mamba_layers: bool, sw: Switches) -> bool:
    """overrides.py::_mamba_radix_cache_resolution gate (GraniteMoeHybrid joins when it has mamba layers)."""
    if architecture == "GraniteMoeHybridForCausalLM":
        return has_mamba_layers
    return architecture in sw.mamba_radix_cache_archs


def supports_extra_buffer(architecture: str, linear_attn_backend: str, device: str, sw: Switches) -> bool:
    """overrides.py::supports_mamba_cache_extra_buffer: arch listed, triton backend, not XPU."""
    return device != "xpu" and architecture in sw.mamba_extra_buffer_archs and linear_attn_backend == "triton"
