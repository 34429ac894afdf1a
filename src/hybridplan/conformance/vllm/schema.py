"""The vLLM oracle driver's wire format: the scenario it reads (one JSON object a line) and what it writes back (a
header line, then one result a scenario), checked field by field on both sides of the process boundary.

vllm/driver.py runs inside the oracle interpreter (no hybridplan package there: launch.py loads this directory by
path), so this module needs the standard library and the neutral checker (wire.py) only. The driver validates each
scenario it reads and each result it writes; the runner validates every line it reads back. A value of the wrong
shape is refused with a one-line SchemaError naming the field (`groups[1].layers: expected int, got str`).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

# relative: the oracle interpreter imports this package as launch.py's private package, not as hybridplan's
from ..wire import SchemaError, checked

__all__ = ["SchemaError", "header", "result", "scenario"]

Family = Literal["gdn", "mamba2", "kda"]
LayerKind = Literal["attention", "mamba"]


class GdnMixer(TypedDict):
    """MambaStateShapeCalculator.gated_delta_net_state_shape's inputs."""

    num_k_heads: int
    num_v_heads: int
    head_k_dim: int
    head_v_dim: int
    conv_kernel: int


class Mamba2Mixer(TypedDict):
    """MambaStateShapeCalculator.mamba2_state_shape's inputs."""

    intermediate_size: int
    n_groups: int
    num_heads: int
    head_dim: int
    state_size: int
    conv_kernel: int
    chunk_size: int | None  # the config's mamba_chunk_size / chunk_size (ModelConfig.get_mamba_chunk_size reads it)


class KdaMixer(TypedDict):
    """MambaStateShapeCalculator.kda_state_shape's inputs (Kimi-Linear's linear_attn_config)."""

    num_heads: int
    head_dim: int
    conv_kernel: int


class Attention(TypedDict):
    """The full-attention layers: KV heads and head size; MLA's latent rank, rope part and query heads (else None)."""

    total_kv_heads: int
    head_dim: int
    kv_lora_rank: int | None
    qk_rope_head_dim: int | None
    num_heads: int | None


class Cache(TypedDict):
    """The cache arguments as vLLM's CacheConfig receives them (None: its default)."""

    block_size: int | None
    kv_cache_dtype: str
    enable_prefix_caching: bool
    mamba_block_size: int | None
    mamba_cache_dtype: str
    mamba_ssm_cache_dtype: str


class Card(TypedDict):
    """The card vLLM's CUDA platform answers as: capability, CUDA runtime major, total memory, name."""

    sm: int
    cuda: int
    memory: int
    name: str


class Scenario(TypedDict):
    """One scenario as the driver reads it (vllm/scenarios.py::payload)."""

    id: str
    family: Family
    tp: int
    num_speculative_tokens: int
    model_dtype: str
    architecture: str
    mixer: GdnMixer | Mamba2Mixer | KdaMixer
    attn: Attention
    layers: list[LayerKind]  # every layer in order, the MTP drafter's attention layers last
    cache: Cache
    max_model_len: int
    original_max_model_len: int  # -1: auto-fit
    available_memory: int
    argv: list[str]  # `vllm serve` arguments, the model first
    card: Card


class _HeaderFields(TypedDict):
    header: Literal[True]
    engine: Literal["vllm"] | None  # None: the interpreter has no usable vLLM (then `error` says why)


class Header(_HeaderFields, total=False):
    """The driver's first line."""

    version: str
    python: str
    error: str


class _ErrorFields(TypedDict):
    type: str  # the exception's class name (hybridplan's side: the refusal kind)
    message: str


class OracleError(_ErrorFields, total=False):
    """Why vLLM refused the scenario; hybridplan's side also names the rule that refused."""

    rule: str


class Group(TypedDict):
    """One KV cache group: its kind, layers, block size and the blocks a max_model_len request takes."""

    kind: LayerKind
    layers: int
    block_size: int
    blocks_per_request: int


class _RefusalFields(TypedDict):
    id: str
    error: OracleError


class Refusal(_RefusalFields, total=False):
    """A scenario vLLM refused (the parse is there when the parser read the argv)."""

    parsed: dict[str, Any]


class Plan(TypedDict):
    """What vLLM's own planning gives for a scenario, in the compared fields."""

    id: str
    parsed: dict[str, Any]  # the `vllm serve` values that differ from the parser's defaults
    attention_backend: str  # the full-attention layers' backend (AttentionBackendEnum name)
    block_size: int
    mamba_block_size: int
    mamba_cache_mode: str
    mamba_page_size_padded: int | None
    attn_page_bytes: int
    state_page_bytes: int
    page_bytes: int
    num_blocks: int
    groups: list[Group]
    max_model_len: int
    kv_cache_tokens: int
    max_concurrency: str  # repr() of the float, compared exactly
    conv_shape: list[int]
    temporal_shape: list[int]
    state_dtypes: list[str]
    max_num_seqs: int | None
    max_num_batched_tokens: int | None


Result = Plan | Refusal


def scenario(obj: object) -> Scenario:
    """`obj` as a Scenario, or SchemaError naming the first field that is not one."""
    return checked(Scenario, obj, "vLLM oracle scenario")


def header(obj: object) -> Header:
    """`obj` as the driver's Header, or SchemaError naming the field."""
    return checked(Header, obj, "vLLM oracle header")


def result(obj: object) -> Result:
    """`obj` as a Plan, or as a Refusal when it carries `error`."""
    where = f"vLLM oracle result {obj.get('id')!r}" if isinstance(obj, dict) else "vLLM oracle result"
    if isinstance(obj, dict) and "error" in obj:
        return checked(Refusal, obj, where)
    return checked(Plan, obj, where)
