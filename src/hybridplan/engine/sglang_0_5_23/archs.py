"""Architecture lists of sglang 0.5.23 that decide radix-cache handling and speculative defaults."""

from __future__ import annotations

# arg_groups/overrides.py::_MAMBA_RADIX_CACHE_ARCHS (GraniteMoeHybrid joins when it has mamba layers)
MAMBA_RADIX_CACHE_ARCHS = frozenset({
    "KimiLinearForCausalLM", "KimiK3ForConditionalGeneration", "BailingMoeV2_5ForCausalLM",
    "BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration", "Qwen3NextForCausalLM",
    "Qwen3_5MoeForConditionalGeneration", "InternS2PreviewForConditionalGeneration",
    "InternS2MobiusForConditionalGeneration", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForCausalLM",
    "Qwen3_5ForCausalLM", "Qwen4ExpForConditionalGeneration", "MiniCPMV4_6ForConditionalGeneration",
    "MiniCPMV4_7ForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
    "NemotronH_Omni_Reasoning_V3", "FalconH1ForCausalLM", "JetNemotronForCausalLM",
    "JetVLMForConditionalGeneration", "Lfm2ForCausalLM", "Lfm2MoeForCausalLM", "ZayaForCausalLM",
    "Glm5NextForConditionalGeneration",
})

# arg_groups/overrides.py::_MAMBA_EXTRA_BUFFER_ARCHS
MAMBA_EXTRA_BUFFER_ARCHS = frozenset({
    "KimiLinearForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "Qwen3_5MoeForCausalLM", "Qwen3_5ForCausalLM", "Qwen3NextForCausalLM", "Qwen4ExpForConditionalGeneration",
    "InternS2PreviewForConditionalGeneration", "MiniCPMV4_6ForConditionalGeneration",
    "MiniCPMV4_7ForConditionalGeneration", "BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM",
    "BailingMoeV3VLForConditionalGeneration", "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM",
    "Glm5NextForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
    "NemotronH_Omni_Reasoning_V3", "KimiK3ForConditionalGeneration", "InklingForConditionalGeneration",
    "InklingForConditionalGenerationMTP",
})

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


def uses_mamba_radix_cache(architecture: str, has_mamba_layers: bool) -> bool:
    """overrides.py::_mamba_radix_cache_resolution gate."""
    if architecture == "GraniteMoeHybridForCausalLM":
        return has_mamba_layers
    return architecture in MAMBA_RADIX_CACHE_ARCHS


def supports_extra_buffer(architecture: str, linear_attn_backend: str, device: str) -> bool:
    """overrides.py::supports_mamba_cache_extra_buffer: arch listed, triton backend, not XPU."""
    return device != "xpu" and architecture in MAMBA_EXTRA_BUFFER_ARCHS and linear_attn_backend == "triton"
