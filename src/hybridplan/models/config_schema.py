"""The config.json fields the family parsers read, validated (type and range) before any of them is used.

Absent fields stay absent (the parsers apply the engine config classes' defaults); a field that is present must be
of the right type and within the bounds of hybridplan.limits, and the error names its path in the file.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from hybridplan.errors import BadInput
from hybridplan.limits import (MAX_CONTEXT, MAX_CONV_KERNEL, MAX_DIM, MAX_HEADS, MAX_LAYERS, MAX_RATIO,
                               MAX_SPEC_TOKENS)


def _whole(value: object) -> object:
    """JSON integers, and floats with no fraction (as Python's config classes keep them); no bools or strings."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be an integer")
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            raise ValueError(f"must be an integer, got {value!r}")
        return int(value)
    return value


_WHOLE = BeforeValidator(_whole)

# optional config fields: whole numbers (or positive reals) within hybridplan.limits
Layers = Optional[Annotated[int, _WHOLE, Field(ge=1, le=MAX_LAYERS)]]
LayersOrZero = Optional[Annotated[int, _WHOLE, Field(ge=0, le=MAX_LAYERS)]]
Heads = Optional[Annotated[int, _WHOLE, Field(ge=1, le=MAX_HEADS)]]
Dim = Optional[Annotated[int, _WHOLE, Field(ge=1, le=MAX_DIM)]]
DimOrZero = Optional[Annotated[int, _WHOLE, Field(ge=0, le=MAX_DIM)]]
Kernel = Optional[Annotated[int, _WHOLE, Field(ge=1, le=MAX_CONV_KERNEL)]]
Tokens = Optional[Annotated[int, _WHOLE, Field(ge=1, le=MAX_CONTEXT)]]
SpecTokens = Optional[Annotated[int, _WHOLE, Field(ge=1, le=MAX_SPEC_TOKENS)]]
HeadsReal = Optional[Annotated[float, Field(gt=0, le=MAX_HEADS, allow_inf_nan=False)]]
Ratio = Optional[Annotated[float, Field(gt=0, le=MAX_RATIO, allow_inf_nan=False)]]
LayerNames = Optional[Annotated[list[str], Field(max_length=MAX_LAYERS)]]


class _Fields(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=False, allow_inf_nan=False)


class RopeFields(_Fields):
    factor: Ratio = None
    original_max_position_embeddings: Tokens = None


class LinearAttnFields(_Fields):
    """Kimi's `linear_attn_config`."""

    kda_layers: Optional[Annotated[list[Annotated[int, _WHOLE, Field(ge=1, le=MAX_LAYERS)]],
                                   Field(max_length=MAX_LAYERS)]] = None
    num_heads: Heads = None
    head_dim: Dim = None
    short_conv_kernel_size: Kernel = None


class TextFields(_Fields):
    """The text config (or the root when there is no `text_config`)."""

    num_hidden_layers: Layers = None
    num_nextn_predict_layers: LayersOrZero = None
    full_attention_interval: Layers = None
    layer_types: LayerNames = None
    layers_block_type: LayerNames = None
    hybrid_override_pattern: Optional[Annotated[str, Field(max_length=MAX_LAYERS)]] = None
    full_attn_idxs: Optional[Annotated[list[Annotated[int, BeforeValidator(_whole), Field(ge=0, lt=MAX_LAYERS)]],
                                       Field(max_length=MAX_LAYERS)]] = None
    num_attention_heads: Heads = None
    num_key_value_heads: Heads = None
    linear_num_key_heads: Heads = None
    linear_num_value_heads: Heads = None
    mamba_num_heads: Heads = None
    mamba_n_heads: Heads = None
    num_heads: Heads = None
    n_groups: Heads = None
    mamba_n_groups: Heads = None
    head_dim: Dim = None
    v_head_dim: Dim = None
    hidden_size: Dim = None
    intermediate_size: Dim = None
    linear_key_head_dim: Dim = None
    linear_value_head_dim: Dim = None
    mamba_head_dim: Dim = None
    mamba_d_head: Optional[Union[Literal["auto"], Annotated[int, BeforeValidator(_whole), Field(ge=1, le=MAX_DIM)]]] = None
    mamba_d_ssm: Dim = None
    ssm_state_size: Dim = None
    mamba_d_state: Dim = None
    state_size: Dim = None
    kv_lora_rank: Dim = None
    qk_rope_head_dim: Dim = None
    mamba_expand: HeadsReal = None
    expand: HeadsReal = None
    linear_conv_kernel_dim: Kernel = None
    conv_kernel: Kernel = None
    mamba_d_conv: Kernel = None
    conv_L_cache: Kernel = None
    mamba_chunk_size: Tokens = None
    chunk_size: Tokens = None
    max_sequence_length: Tokens = None
    seq_length: Tokens = None
    max_seq_len: Tokens = None
    model_max_length: Tokens = None
    max_position_embeddings: Tokens = None
    rope_scaling: Optional[RopeFields] = None
    rope_parameters: Optional[RopeFields] = None
    linear_attn_config: Optional[LinearAttnFields] = None


class VisionFields(_Fields):
    num_hidden_layers: Layers = None
    vt_num_hidden_layers: Layers = None
    depth: Layers = None
    hidden_size: Dim = None
    vt_hidden_size: Dim = None


class DraftBlockFields(_Fields):
    block_size: SpecTokens = None
    markov_rank: DimOrZero = None


class RootFields(_Fields):
    architectures: Optional[Annotated[list[str], Field(max_length=64)]] = None
    model_type: Optional[str] = None
    vision_config: Optional[VisionFields] = None
    block_size: SpecTokens = None
    dspark_block_size: SpecTokens = None
    dflash_config: Optional[DraftBlockFields] = None
    dspark_config: Optional[DraftBlockFields] = None


def _validate(model: type[_Fields], data: dict[str, Any], origin: str, prefix: str) -> None:
    try:
        model.model_validate({k: data[k] for k in model.model_fields if k in data})
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        parts = [p for p in err["loc"] if isinstance(p, int) or p.isidentifier()]  # drop union/validator tags
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")
        raise BadInput(f"{origin}: `{prefix}{loc}`: {err['msg']}") from None


def check_config(config: dict[str, Any], origin: str) -> None:
    """Refuse a config whose geometry fields have the wrong type or lie outside the bounds."""
    _validate(RootFields, config, origin, "")
    text = config.get("text_config")
    if text is not None and not isinstance(text, dict):
        raise BadInput(f"{origin}: `text_config` must be an object")
    _validate(TextFields, text if text is not None else config, origin, "text_config." if text is not None else "")
