"""Element sizes and the torch names the engine prints, for the dtypes that size pools."""

from __future__ import annotations

# bytes per element; fp4 is stored as float4_e2m1fn_x2, one byte per packed pair
ITEMSIZE: dict[str, int] = {
    "float32": 4,
    "bfloat16": 2,
    "float16": 2,
    "float8_e4m3fn": 1,
    "float8_e4m3fnuz": 1,
    "float8_e5m2": 1,
    "float4_e2m1fn_x2": 1,
}

# `SGLANG_MAMBA_*_DTYPE` / `--mamba-ssm-dtype` spellings (configs/mamba_utils.py::mamba2_state_dtype)
STATE_DTYPES = ("float32", "bfloat16", "float16")

# config.json `torch_dtype` / `dtype` spellings -> canonical names
_ALIASES = {
    "float": "float32",
    "fp32": "float32",
    "float32": "float32",
    "half": "float16",
    "fp16": "float16",
    "float16": "float16",
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
}


def itemsize(dtype: str) -> int:
    """Bytes per element of a canonical dtype name."""
    return ITEMSIZE[dtype]


def model_dtype(config_dtype: str | None, flag: str = "auto", model_type: str = "") -> str:
    """The dtype the engine runs the model in (and `auto` KV uses).

    Mirrors configs/model_config.py::_get_and_verify_dtype: under `--dtype auto` the text config's
    dtype, with float32 (or a missing dtype) served as float16, bfloat16 for Gemma.
    """
    if flag and flag != "auto":
        return _ALIASES.get(flag.lower(), flag.lower())
    name = _ALIASES.get(str(config_dtype).replace("torch.", "").lower()) if config_dtype else None
    if name is None or name == "float32":
        return "bfloat16" if model_type.startswith("gemma") else "float16"
    return name


def torch_name(dtype: str) -> str:
    """How the engine's log prints a dtype (`torch.bfloat16`)."""
    return f"torch.{dtype}"
