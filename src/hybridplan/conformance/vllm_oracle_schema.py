"""The vLLM oracle driver's wire format: the scenario it reads (one JSON object a line) and what it writes back (a
header line, then one result a scenario), checked field by field on both sides of the process boundary.

vllm_oracle_driver.py runs inside the oracle interpreter (no hybridplan package there: it loads this file by path),
so this module needs the standard library only. The driver validates each scenario it reads and each result it
writes; vllm_conformance.run_oracle validates every line it reads back. A value of the wrong shape is refused with a
one-line SchemaError naming the field (`groups[1].layers: expected int, got str`).
"""

from __future__ import annotations

import types
import typing
from functools import lru_cache
from typing import Any, Literal, TypedDict, TypeVar, Union

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
    """One scenario as the driver reads it (vllm_conformance.payload)."""

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


class OracleError(TypedDict):
    type: str  # the exception's class name (hybridplan's side: the refusal kind)
    message: str


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


class SchemaError(ValueError):
    """A value of the wrong shape at the oracle boundary; the message names the field, on one line."""


T = TypeVar("T")


def scenario(obj: object) -> Scenario:
    """`obj` as a Scenario, or SchemaError naming the first field that is not one."""
    return _as(Scenario, obj, "scenario")


def header(obj: object) -> Header:
    """`obj` as the driver's Header, or SchemaError naming the field."""
    return _as(Header, obj, "header")


def result(obj: object) -> Result:
    """`obj` as a Plan, or as a Refusal when it carries `error`."""
    where = f"result {obj.get('id')!r}" if isinstance(obj, dict) else "result"
    if isinstance(obj, dict) and "error" in obj:
        return _as(Refusal, obj, where)
    return _as(Plan, obj, where)


def _as(kind: type[T], obj: object, where: str) -> T:
    try:
        _check(kind, obj, "")
    except SchemaError as exc:
        raise SchemaError(f"vLLM oracle {where}: {exc}") from None
    return typing.cast(T, obj)


def _check(kind: Any, value: object, path: str) -> None:
    """Raise SchemaError unless `value` is a JSON value of type `kind` (a TypedDict, list, dict, Literal, union or
    plain type: bool is no int); `path` names where it sits."""
    if kind is Any:
        return
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if typing.is_typeddict(kind):
        _check_record(kind, value, path)
    elif origin is Literal:
        if value not in args or isinstance(value, bool) != any(isinstance(a, bool) for a in args):
            _fail(path, _expected(kind), value)
    elif origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if value is None and len(options) < len(args):
            return
        for option in options:
            try:
                return _check(option, value, path)
            except SchemaError:
                if len(options) == 1 and isinstance(value, (dict, list)):
                    raise  # X | None holding an X that is wrong inside: X's own complaint names the field
        _fail(path, " or ".join(_expected(a) for a in args), value)
    elif origin is list:
        if not isinstance(value, list):
            _fail(path, _expected(kind), value)
        for i, item in enumerate(value):
            _check(args[0], item, f"{path}[{i}]")
    elif origin is dict:
        if not isinstance(value, dict):
            _fail(path, _expected(kind), value)
        for key, item in value.items():
            _check(args[1], item, _join(path, str(key)))
    elif kind is type(None):
        if value is not None:
            _fail(path, _expected(kind), value)
    elif not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        _fail(path, _expected(kind), value)


def _expected(kind: Any) -> str:
    """How an error names a type: int, 'a' or 'b', a list, an object (Plan), null."""
    origin = typing.get_origin(kind)
    if kind is type(None):
        return "null"
    if origin is Literal:
        return " or ".join(repr(a) for a in typing.get_args(kind))
    if origin is list:
        return "a list"
    if origin is dict:
        return "an object"
    if typing.is_typeddict(kind):
        return f"an object ({kind.__name__})"
    return str(getattr(kind, "__name__", kind))


def _check_record(kind: Any, value: object, path: str) -> None:
    if not isinstance(value, dict):
        _fail(path, _expected(kind), value)
    hints = _hints(kind)
    for key in sorted(kind.__required_keys__):
        if key not in value:
            raise SchemaError(f"{_join(path, key)}: missing")
    for key, item in value.items():
        if key not in hints:
            raise SchemaError(f"{_join(path, str(key))}: not a field of {kind.__name__}")
        _check(hints[key], item, _join(path, key))


@lru_cache(maxsize=None)
def _hints(kind: Any) -> dict[str, Any]:
    """A TypedDict's field types, evaluated once."""
    return typing.get_type_hints(kind)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _fail(path: str, expected: str, value: object) -> typing.NoReturn:
    raise SchemaError(f"{path or 'value'}: expected {expected}, got {type(value).__name__}")
