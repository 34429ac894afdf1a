"""Kimi-Linear's KDA state dtypes on vLLM (model_executor/layers/mamba/mamba_utils.py::
MambaStateDtypeCalculator.kda_state_dtype), as the KDA layer
(model_executor/layers/mamba/gdn/kimi_gdn_linear_attn.py::KimiGatedDeltaNetAttention) and the model class's
get_mamba_state_*_from_config (which the hybrid block size is computed from; models/kimi_k3/nvidia/model.py in
0.33.0, model_executor/models/kimi_linear.py in 0.24.0) call them."""

from __future__ import annotations

from hybridplan.errors import EngineRefusal


def kda_layer_dtypes(conv_dtype: str) -> tuple[str, str]:
    """The KDA layer's state dtypes (KimiGatedDeltaNetAttention.get_state_dtype passes no mamba_ssm_cache_dtype):
    the conv in the mamba cache dtype, the recurrent state float32."""
    return conv_dtype, "float32"


def kda_class_dtypes(conv_dtype: str, ssm: str, honours_ssm_flag: bool) -> tuple[str, str]:
    """The model class's state dtypes (KimiLinearForCausalLM.get_mamba_state_dtype_from_config), which
    Platform._align_hybrid_block_size sizes the state page from: 0.33.0 passes --mamba-ssm-cache-dtype (auto ->
    float32; float32 or bfloat16; anything else a ValueError), 0.24.0 does not (float32)."""
    if not honours_ssm_flag or ssm in ("auto", "float32"):
        return conv_dtype, "float32"
    if ssm == "bfloat16":
        return conv_dtype, "bfloat16"
    raise EngineRefusal(f"KDA recurrent state supports only auto, float32, and bfloat16; got {ssm}",
                        rule="model_executor/layers/mamba/mamba_utils.py::MambaStateDtypeCalculator.kda_state_dtype")
