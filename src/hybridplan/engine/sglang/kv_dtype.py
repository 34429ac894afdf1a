"""KV-cache dtype resolution of sglang 0.5.23 (mem_cache/kv_cache_dtype.py::configure_kv_cache_dtype)."""

from __future__ import annotations

_FLAG_TO_DTYPE = {
    "fp8_e5m2": "float8_e5m2",
    "fp8_e4m3": "float8_e4m3fn",
    "mxfp8": "float8_e4m3fn",
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "nvfp4": "float4_e2m1fn_x2",
    "fp4_mx_block16": "float4_e2m1fn_x2",
}


def target_kv_dtype(flag: str, kv_cache_quant_algo: str | None, model_dtype: str, device: str) -> tuple[str, str]:
    """(dtype, why) for the target's KV pool: `auto` is the model dtype unless the checkpoint declares FP8 KV."""
    if flag == "auto":
        if isinstance(kv_cache_quant_algo, str) and kv_cache_quant_algo.upper() == "FP8":
            return ("float8_e4m3fnuz" if device == "hip" else "float8_e4m3fn"), "auto: checkpoint kv_cache_quant_algo FP8"
        return model_dtype, "auto: model dtype"
    dtype = _FLAG_TO_DTYPE[flag]
    if device == "hip" and flag in ("fp8_e4m3", "fp8_e5m2"):
        dtype = "float8_e4m3fnuz"
    return dtype, f"--kv-cache-dtype {flag}"


def draft_kv_dtype(flag: str, draft_flag: str | None, draft_model_dtype: str, draft_attention_backend: str | None,
                   device: str) -> tuple[str, str]:
    """DFLASH/DSPARK draft KV dtype as mem_cache/draft_kv_budget.py prices it (`auto` with model=None: the draft's dtype)."""
    chosen = draft_flag if draft_flag is not None else flag
    if chosen == "auto":
        dtype, why = draft_model_dtype, "auto: the draft's model dtype"
    else:
        dtype, why = target_kv_dtype(chosen, None, draft_model_dtype, device)
    if draft_attention_backend == "fa4" and dtype != draft_model_dtype:
        return draft_model_dtype, "fa4 draft backend: the draft's model dtype"
    return dtype, why
