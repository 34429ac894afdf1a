"""vLLM's hybrid KV cache plan (0.20.0 to 0.34.0, each release by its switches in engine/vllm/behaviours.py):
resolved cache arguments, per-layer pages, the hybrid block size, the groups,
and the capacity and concurrency its boot log prints, from the model geometry and the available KV memory.

Scope: hybrid GDN / Mamba2 models with MHA full attention on the FLASH_ATTN backend's kernel-block contract
(MultipleOf(16)), and Kimi-Linear (KDA state + MLA attention on the MLA backend vLLM picks for the card,
engine/vllm/mla.py). Every function mirrors the vLLM function it cites.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from math import lcm
from typing import Any

from hybridplan.dtypes import itemsize, model_dtype
from hybridplan.engine.vllm.behaviours import NEWEST, Release, Wording
from hybridplan.engine.vllm.kda import kda_class_dtypes, kda_layer_dtypes
from hybridplan.engine.vllm.mla import FLASH_ATTN, AttentionBackend, select_mla_backend
from hybridplan.engine.vllm.startup import ModelLength, check_model_length, cudagraph_mode
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.models.geometry import KdaMixer, Mamba2Mixer, ModelGeometry
from hybridplan.monotone import largest_true

FLASHINFER_GDN_CHECKPOINT_ALIGNMENT = 64  # v1/attention/backends/gdn_attn.py
# utils/torch_utils.py::STR_DTYPE_TO_TORCH_DTYPE, by element size
_CACHE_DTYPES = {"auto": 0, "bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4, "fp8": 1,
                 "fp8_e4m3": 1, "fp8_e5m2": 1}
_MAMBA_DTYPES = ("auto", "bfloat16", "float16", "float32")


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True, kw_only=True)
class VllmArgs:
    """The cache and scheduler arguments after vLLM's resolution (EngineArgs.create_engine_config)."""

    model: str
    tensor_parallel_size: int
    model_dtype: str
    kv_cache_dtype: str  # the resolved string (`auto` or a quantized name)
    block_size: int | None  # as given (None: the backend's preferred size, requested_block_size)
    enable_prefix_caching: bool
    mamba_cache_mode: str  # none | align
    mamba_block_size: int | None  # as given
    # the state kernels' chunk ('all' mode aligns the block to it): config/model.py::ModelConfig.get_mamba_chunk_size
    # (the config's mamba_chunk_size or chunk_size, else 2048)
    mamba_chunk_size: int = 2048
    mamba_cache_dtype: str
    mamba_ssm_cache_dtype: str  # after the model's own default (Qwen3.5's config, Nemotron-H's float32)
    max_model_len: int  # the length asked for (-1: auto-fit) or the model's derived length
    auto_fit: bool
    max_num_seqs: int | None  # None: a card-dependent default on an unknown card
    max_num_batched_tokens: int | None
    gpu_memory_utilization: float  # as given, else the release's default (0.92; 1.0 under the extensible KV cache)
    kv_cache_memory_bytes: int | None
    num_speculative_tokens: int
    draft_attention_layers: int  # the MTP drafter's full-attention layers, KV cache layers like the target's
    gdn_prefill_checkpoints: bool  # FlashInfer runs the GDN prefill (it exports align-mode checkpoints from 0.33.0)
    is_mamba2: bool  # MambaMixer2 layers (they always export prefill checkpoints)
    is_kda: bool = False  # Kimi-Linear's KDA layers (float32 recurrent state, engine/vllm/kda.py)
    # the release's state layers keep a prefill checkpoint page (behaviours.Release): GDN under FlashInfer, Mamba2
    gdn_checkpoint_pages: bool = True
    mamba2_checkpoint_pages: bool = True
    checks_hold_null_block: bool = True  # the memory checks and auto-fit leave the null block out
    tokens_from_blocks: bool = False  # the logged KV cache size is blocks // groups x block size (0.20.0)
    refusal_wording: Wording = "0.22"  # behaviours.Release.refusal_wording
    extensible_kv_cache: bool = False  # the extensible KV cache sizes the pool (0.34.0's default on CUDA)
    default_block_size: int = 16  # behaviours.Release.default_block_size
    planning_module: str = "v1/core/kv_cache_planning.py"  # behaviours.Release.planning_module (refusals name it)
    notes: tuple[str, ...] = ()
    attn_backend: AttentionBackend = FLASH_ATTN  # the full-attention layers' backend (its kernel-block contract)
    mla_block_alignment: int = 1  # behaviours.Release.mla_hybrid_block_alignment for an MLA hybrid
    kda_ssm_cache_dtype_flag: bool = True  # behaviours.Release.kda_ssm_cache_dtype_flag
    # the CUDA-graph mode the launch resolves to and why (engine/vllm/startup.py::cudagraph_mode): full graphs need
    # one Mamba cache block per decode sequence
    cudagraph_mode: str = "FULL_AND_PIECEWISE"
    cudagraph_reason: str = "optimization level 2 (config/vllm.py::OPTIMIZATION_LEVEL_02)"


@dataclass(frozen=True, kw_only=True)
class GroupPlan:
    """One KV cache group: its kind, layers, block size and the blocks one request at max_model_len takes."""

    kind: str  # attention | mamba
    layers: int
    block_size: int
    blocks_per_request: int


@dataclass(frozen=True, kw_only=True)
class KVPlan:
    """Everything vLLM derives for the KV cache from the arguments, the geometry and the available memory."""

    block_size: int
    mamba_block_size: int
    mamba_cache_mode: str
    mamba_page_size_padded: int | None
    attn_page_bytes: int  # one attention layer's page at the hybrid block size
    attn_page_bytes_at_requested_block: int  # the same page before the block size was raised
    state_page_bytes: int  # one state layer's page, unpadded
    page_bytes: int  # the unified page every layer uses
    conv_shape: tuple[int, int]
    temporal_shape: tuple[int, int, int]
    state_dtypes: tuple[str, str]
    groups: tuple[GroupPlan, ...]
    bytes_per_block: int
    num_blocks: int
    max_model_len: int
    kv_cache_tokens: int
    max_concurrency: float

    @property
    def state_pages_per_request(self) -> int:
        """State pages (over all state groups) one request holds; align mode keeps 2 + checkpoint per group."""
        return sum(g.blocks_per_request for g in self.groups if g.kind == "mamba")

    @property
    def blocks_per_request(self) -> int:
        return sum(g.blocks_per_request for g in self.groups)


def _supported(geo: ModelGeometry) -> None:
    if geo.family == "kda":
        _supported_kda(geo)
        return
    if geo.family not in ("gdn", "mamba2") or not isinstance(geo.mixer, Mamba2Mixer):
        raise BadInput(f"vLLM engine model: family {geo.family!r} is not modelled yet (GDN, Mamba2 and Kimi-Linear "
                       "KDA hybrids are)")
    if geo.kv.kind != "mha" or not geo.full_attention_layer_ids:
        raise BadInput("vLLM engine model: only hybrids with MHA full-attention layers are modelled yet")


def _supported_kda(geo: ModelGeometry) -> None:
    """Kimi-Linear (KimiLinearForCausalLM: KDA layers + MLA layers); Kimi K3 (its own KDA and MLA layer classes) is
    not modelled."""
    if geo.architecture != "KimiLinearForCausalLM" or not isinstance(geo.mixer, KdaMixer) or geo.kv.kind != "mla":
        raise BadInput(f"vLLM engine model: {geo.architecture} is not modelled yet (of the KDA hybrids, Kimi-Linear "
                       "is)")


def _ssm_default(geo: ModelGeometry, given: str) -> str:
    """The model's own state dtype default when `auto` (model_executor/models/config.py:
    Qwen3_5ForConditionalGenerationConfig -> config mamba_ssm_dtype; NemotronHForCausalLMConfig -> float32)."""
    if given != "auto":
        return given
    if geo.architecture.startswith("Qwen3_5") and geo.config_ssm_dtype:
        return geo.config_ssm_dtype
    if geo.architecture in ("NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"):
        return geo.config_ssm_dtype or "float32"
    return "auto"


GIB = 2**30


def batch_defaults(values: dict[str, Any], max_model_len: int, total_memory_bytes: int | None, device_name: str,
                   sm: int | None, large_tier: bool = True) -> tuple[int | None, int | None]:
    """(max_num_seqs, max_num_batched_tokens) after engine/arg_utils.py::
    _set_default_max_num_seqs_and_batched_tokens_args for `vllm serve` (OPENAI_API_SERVER) with chunked prefill on
    (the hybrids' default): get_batch_defaults' tiers by card memory (>= 160 GiB: 1024 / 16384; >= 70 GiB and not an
    A100 or a GB10: 1024 / 8192; else 256 / 2048), doubled under --performance-mode throughput, the tokens capped at
    max_num_seqs x max_model_len and the sequences at the tokens. None where the card is unknown and a default
    applies. `large_tier` False: a release without the >= 160 GiB tier (before 0.28.0). GB10 (sm121) is on the small
    tier in every release: NVML has no memory total there, so get_batch_defaults' query raised and it fell back to the
    small tier, and from 0.33.0 it keeps GB10 there by name (platforms/cuda.py::get_device_total_memory)."""
    seqs, tokens = values.get("max_num_seqs"), values.get("max_num_batched_tokens")
    if total_memory_bytes is None:
        return seqs, tokens
    if large_tier and total_memory_bytes >= 160 * GIB:
        d_tokens, d_seqs = 16384, 1024
    elif total_memory_bytes >= 70 * GIB and "a100" not in device_name.lower() and sm != 121:
        d_tokens, d_seqs = 8192, 1024
    else:
        d_tokens, d_seqs = 2048, 256
    throughput = values.get("performance_mode") == "throughput"
    r_tokens = tokens if tokens is not None else d_tokens * (2 if throughput else 1)
    r_seqs = seqs if seqs is not None else d_seqs * (2 if throughput else 1)
    if tokens is None:
        if values.get("enable_chunked_prefill") is False:
            r_tokens = max(max_model_len, r_tokens)
        r_tokens = min(r_seqs * max_model_len, r_tokens)
    if seqs is None:
        r_seqs = min(r_seqs, r_tokens)
    return int(r_seqs), int(r_tokens)


def gdn_prefill_flashinfer(geo: ModelGeometry, sm: int | None, cuda_runtime_major: int) -> bool:
    """model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py::_resolve_gdn_prefill_backend under `auto` on CUDA:
    FlashInfer on sm90, and on the sm10x / sm12x families when head_k_dim is 128 and the CUDA runtime is 13 or newer;
    else Triton (FLA), which exports no prefill checkpoints."""
    if geo.family != "gdn" or sm is None:
        return False
    head_k_dim = geo.mixer.state_size if isinstance(geo.mixer, Mamba2Mixer) else 0
    return sm == 90 or (sm // 10 in (10, 12) and head_k_dim == 128 and cuda_runtime_major >= 13)


def resolve(values: dict[str, Any], geo: ModelGeometry, *, sm: int | None = 90, total_memory_bytes: int | None = None,
            device_name: str = "", cuda_runtime_major: int = 12, release: Release = NEWEST,
            model_length: ModelLength | None = None, env: Mapping[str, str] | None = None) -> VllmArgs:
    """EngineArgs.create_engine_config's cache fields: prefix caching on by default for generative hybrids
    (config/model.py::is_prefix_caching_supported), the cache mode derived from it
    (model_executor/models/config.py::MambaModelConfig.verify_and_update_config; --mamba-cache-mode has no effect)."""
    _supported(geo)
    if geo.family == "kda" and not release.kda_fused_conv_state:  # behaviours.V0_20_1
        raise BadInput(f"vLLM engine model: Kimi-Linear on vLLM {release.version} is not modelled (its KDA state "
                       "keeps the q, k and v conv states apart: mamba_utils.py::kda_state_shape); 0.24.0 and 0.33.0 "
                       "are")
    kv = str(values.get("kv_cache_dtype", "auto"))
    if kv not in _CACHE_DTYPES:
        raise BadInput(f"--kv-cache-dtype: {kv!r} is not modelled (one of {', '.join(_CACHE_DTYPES)})")
    if kv == "auto" and (geo.kv_cache_quant_algo or "").upper() == "FP8":
        kv = "fp8"  # utils/torch_utils.py::resolve_kv_cache_dtype_string (the checkpoint's KV scheme)
    for dest in ("mamba_cache_dtype", "mamba_ssm_cache_dtype"):
        if str(values.get(dest, "auto")) not in _MAMBA_DTYPES:
            raise BadInput(f"--{dest.replace('_', '-')}: one of {', '.join(_MAMBA_DTYPES)}")
    pc = values.get("enable_prefix_caching")
    pc = release.hybrid_prefix_caching if pc is None else bool(pc)
    mode = _cache_mode(values, geo, pc, release)
    mml = values.get("max_model_len")
    auto_fit = mml == -1
    derived = model_length.derived if model_length is not None else geo.context_length
    length = derived if mml is None or auto_fit else int(mml)
    if length < 1:
        raise BadInput("--max-model-len: must be a positive length or -1/auto")
    if mml is not None and not auto_fit:
        check_model_length(length, model_length, env or {})
    n_spec, draft_layers = _speculative(values.get("speculative_config"), geo)
    seqs, batched = batch_defaults(values, length, total_memory_bytes, device_name, sm, release.large_card_batch_tier)
    m_dtype = model_dtype(geo.config_dtype, str(values.get("dtype", "auto")), geo.model_type)
    mla = geo.kv.kind == "mla"
    if mla and m_dtype not in ("bfloat16", "float16"):  # every MLA backend's supported_dtypes
        raise BadInput(f"--dtype: the MLA attention backends run float16 or bfloat16, not {m_dtype}")
    backend = select_mla_backend(sm, kv, values.get("block_size"), values.get("attention_backend")) if mla \
        else FLASH_ATTN
    graphs, graph_why = cudagraph_mode(values)
    notes = (f"--mamba-cache-mode is deprecated in {release.version} and has no effect "
             "(engine/arg_utils.py::_MAMBA_CACHE_MODE_DEPRECATION_MESSAGE)",) \
        if "mamba_cache_mode" in values and not release.mamba_cache_mode_flag else ()
    extensible = _extensible(values, release)
    return VllmArgs(
        model=str(values.get("model", "")), tensor_parallel_size=int(values.get("tensor_parallel_size", 1)),
        model_dtype=m_dtype,
        kv_cache_dtype=kv, block_size=values.get("block_size"), enable_prefix_caching=pc,
        mamba_cache_mode=mode, mamba_block_size=values.get("mamba_block_size"),
        mamba_chunk_size=geo.mamba_chunk_size or 2048,
        mamba_cache_dtype=str(values.get("mamba_cache_dtype", "auto")),
        mamba_ssm_cache_dtype=_ssm_default(geo, str(values.get("mamba_ssm_cache_dtype", "auto"))),
        max_model_len=length, auto_fit=auto_fit, max_num_seqs=seqs, max_num_batched_tokens=batched,
        gpu_memory_utilization=float(values.get("gpu_memory_utilization") or (1.0 if extensible else 0.92)),
        kv_cache_memory_bytes=values.get("kv_cache_memory_bytes"), num_speculative_tokens=n_spec,
        draft_attention_layers=draft_layers,
        gdn_prefill_checkpoints=gdn_prefill_flashinfer(geo, sm, cuda_runtime_major), is_mamba2=geo.family == "mamba2",
        is_kda=geo.family == "kda",
        gdn_checkpoint_pages=release.gdn_prefill_checkpoints, mamba2_checkpoint_pages=release.mamba2_prefill_checkpoints,
        checks_hold_null_block=release.checks_hold_null_block, tokens_from_blocks=release.tokens_from_blocks,
        refusal_wording=release.refusal_wording, extensible_kv_cache=extensible,
        default_block_size=release.default_block_size,
        planning_module=release.planning_module,
        notes=notes, attn_backend=backend, mla_block_alignment=release.mla_hybrid_block_alignment if mla else 1,
        kda_ssm_cache_dtype_flag=release.kda_ssm_cache_dtype_flag, cudagraph_mode=graphs, cudagraph_reason=graph_why)


def _extensible(values: dict[str, Any], release: Release) -> bool:
    """config/vllm.py::VllmConfig._resolve_extensible_kv_cache on CUDA: on by default where the release has it, off
    under --disable-extensible-kv-cache, --kv-cache-memory-bytes or --num-gpu-blocks-override."""
    return (release.extensible_kv_cache and values.get("enable_extensible_kv_cache") is not False
            and values.get("kv_cache_memory_bytes") is None and values.get("num_gpu_blocks_override") is None)


def _cache_mode(values: dict[str, Any], geo: ModelGeometry, pc: bool, release: Release) -> str:
    """model_executor/models/config.py::MambaModelConfig.verify_and_update_config: under prefix caching 0.33.0 and
    newer run the state in align mode; older releases honour --mamba-cache-mode, and 'all' runs for a model class with
    SupportsMambaPrefixCaching (by default before 0.28.0, when asked until 0.31.0), 'align' otherwise."""
    if not pc:
        return "none"
    if not release.mamba_cache_mode_flag:
        return "align"
    mode = str(values.get("mamba_cache_mode") or "none")
    supports_all = geo.architecture in release.mamba_prefix_caching_archs
    if mode == "none":
        mode = "all" if supports_all and release.all_mode_default else "align"
    elif mode == "all" and not supports_all:
        mode = "align"
    return mode


# config/speculative.py MTP methods whose drafter is the checkpoint's own MTP block (one full-attention decoder
# layer for Qwen3-Next / Qwen3.5: mtp_num_hidden_layers = 1 in every bundled config)
_MTP_METHODS = ("mtp", "qwen3_next_mtp", "qwen3_5_mtp")


def _speculative(spec: Any, geo: ModelGeometry) -> tuple[int, int]:
    """(num_speculative_tokens, the drafter's attention layers) from --speculative-config."""
    if not spec:
        return 0, 0
    if not isinstance(spec, dict):
        raise BadInput("--speculative-config: a JSON object is expected")
    method = str(spec.get("method", ""))
    if method not in _MTP_METHODS or geo.family != "gdn":
        raise BadInput(f"--speculative-config: method {method!r} on {geo.family} is not modelled yet "
                       "(MTP on GDN hybrids is)")
    n = spec.get("num_speculative_tokens", 1)
    if not isinstance(n, int) or not 1 <= n <= 64:
        raise BadInput("--speculative-config: num_speculative_tokens must be an integer in 1..64")
    return n, 1


def _divide(a: int, b: int) -> int:
    """distributed/utils.py::divide (an assertion in vLLM)."""
    if a % b:
        raise EngineRefusal(f"{a} is not divisible by {b}", rule="distributed/utils.py::divide",
                            kind="AssertionError")
    return a // b


def state_shapes(geo: ModelGeometry, tp: int, num_spec: int) -> tuple[tuple[int, int], tuple[int, int, int]]:
    """(conv, temporal) per layer on one rank, SD conv layout: model_executor/layers/mamba/mamba_utils.py::
    MambaStateShapeCalculator.gated_delta_net_state_shape (GDN) / mamba2_state_shape (extra groups for head shards)."""
    m = geo.mixer
    if isinstance(m, KdaMixer):  # mamba_utils.py::MambaStateShapeCalculator.kda_state_shape (K heads = heads)
        conv_dim = 3 * m.num_heads * m.head_dim  # q, k and v in one conv
        return (m.conv_kernel - 1, _divide(conv_dim, tp)), (_divide(m.num_heads, tp), m.head_dim, m.head_dim)
    assert isinstance(m, Mamba2Mixer)
    n_groups = m.n_groups
    if geo.family == "mamba2" and n_groups % tp:
        n_groups += tp - n_groups  # MambaStateShapeCalculator.extra_groups_for_head_shards
    conv_dim = m.intermediate_size + 2 * n_groups * m.state_size
    conv = (m.conv_kernel - 1 + num_spec, _divide(conv_dim, tp))
    return conv, (_divide(m.num_heads, tp), m.head_dim, m.state_size)


def _cache_itemsize(cache_dtype: str, model: str) -> int:
    """utils/torch_utils.py::get_kv_cache_torch_dtype: `auto` is the model dtype."""
    return itemsize(model) if cache_dtype == "auto" else _CACHE_DTYPES[cache_dtype]


def state_dtypes(args: VllmArgs) -> tuple[str, str]:
    """mamba_utils.py::MambaStateDtypeCalculator._mamba_state_dtype: conv from mamba_cache_dtype, the temporal state
    from mamba_ssm_cache_dtype unless `auto` (then the conv dtype)."""
    conv = args.model_dtype if args.mamba_cache_dtype == "auto" else args.mamba_cache_dtype
    if args.is_kda:
        return kda_layer_dtypes(conv)
    return conv, conv if args.mamba_ssm_cache_dtype == "auto" else args.mamba_ssm_cache_dtype


def state_page_bytes(conv: tuple[int, int], temporal: tuple[int, int, int], dtypes: tuple[str, str]) -> int:
    """v1/kv_cache_interface.py::MambaSpec.page_size_bytes (unpadded): the layer's state tensors, one slot."""
    h, d, s = temporal
    return conv[0] * conv[1] * itemsize(dtypes[0]) + h * d * s * itemsize(dtypes[1])


def attn_page_bytes_per_token(args: VllmArgs, geo: ModelGeometry) -> int:
    """v1/kv_cache_interface.py::AttentionSpec.page_size_bytes at block_size 1: K and V of the rank's KV heads
    (ModelConfig.get_num_kv_heads: max(1, total // tp)); MLAAttentionSpec: one latent head of kv_lora_rank +
    qk_rope_head_dim (ModelConfig.get_head_size), no V, on every rank."""
    if geo.kv.kind == "mla":
        return (geo.kv.kv_lora_rank + geo.kv.qk_rope_head_dim) * _cache_itemsize(args.kv_cache_dtype, args.model_dtype)
    heads = max(1, geo.kv.total_kv_heads // args.tensor_parallel_size)
    return heads * (geo.kv.head_dim + geo.kv.v_head_dim) * _cache_itemsize(args.kv_cache_dtype, args.model_dtype)


def checkpoint_alignment(args: VllmArgs) -> int | None:
    """The state layers' prefill checkpoint alignment (model_executor/layers/mamba/abstract.py::
    get_mamba_prefill_checkpoint_alignment): MambaMixer2 exports at any token (1); GDN only under FlashInfer's
    prefill (64, gdn_prefill_flashinfer); else none."""
    if args.gdn_prefill_checkpoints and args.gdn_checkpoint_pages:  # 0.33.0 on
        return FLASHINFER_GDN_CHECKPOINT_ALIGNMENT
    return 1 if args.is_mamba2 and args.mamba2_checkpoint_pages and args.mamba_cache_mode != "none" else None


def requested_block_size(args: VllmArgs) -> int:
    """The block size before the hybrid alignment: --block-size, else the attention backend's preferred size
    (platforms/interface.py::Platform.update_block_size_for_backend, phase 1)."""
    return args.block_size or args.attn_backend.preferred_block_size(args.default_block_size)


def hybrid_block_size(args: VllmArgs, attn_1: int, state_page: int) -> tuple[int, int, int | None]:
    """(block_size, mamba_block_size, checkpoint alignment) after platforms/interface.py::
    Platform._align_hybrid_block_size: the smallest kernel-aligned attention block whose page covers the state
    page (the backend's smallest kernel block or the requested block, whichever is larger; 0.33.0's MLA hybrids at
    least 128; align mode: also a multiple of the layers' prefill checkpoint alignment), rounded to the backend's
    smallest kernel block; align mode sets mamba_block_size to it; all mode rounds the state page's tokens up to
    lcm(mamba chunk or the user's mamba_block_size, that kernel block) and makes it the mamba_block_size. The
    none-mode mamba_block_size is max_model_len (MambaModelConfig)."""
    block = requested_block_size(args)
    align = args.mamba_cache_mode == "align"
    checkpoint = checkpoint_alignment(args) if align else None
    kernel_1 = args.attn_backend.min_kernel_block
    kernel = max(kernel_1, block, args.mla_block_alignment)
    if align:
        kernel = lcm(kernel, checkpoint or 1)
    if args.mamba_cache_mode == "all":
        chunk = lcm(args.mamba_block_size or args.mamba_chunk_size, kernel)
        attn_block = chunk * _cdiv(_cdiv(state_page, attn_1), chunk)
        return max(block, attn_block), attn_block, checkpoint
    attn_block = kernel * _cdiv(state_page, kernel * attn_1)
    attn_block = kernel_1 * _cdiv(attn_block, kernel_1)
    block = max(block, attn_block)
    if align:
        mamba_block = block
    else:
        mamba_block = args.mamba_block_size or args.max_model_len
    return block, mamba_block, checkpoint


def _groups(n_attn: int, n_state: int) -> list[tuple[str, int]]:
    """v1/core/kv_cache_planning.py::_get_kv_cache_groups_uniform_page_size: each type split into groups of
    `group_size` layers (the smaller count, or the larger when it is under 1.5x the smaller), layers[i::n]."""
    buckets = [("mamba", n_state), ("attention", n_attn)] if n_state else [("attention", n_attn)]
    lo, hi = min(n for _, n in buckets), max(n for _, n in buckets)
    size = hi if hi < lo * 1.5 else lo
    out = []
    for kind, n in buckets:
        k = _cdiv(n, size)
        out += [(kind, len(range(i, n, k))) for i in range(k)]
    return out


@dataclass(frozen=True, kw_only=True)
class KVLayout:
    """What vLLM fixes before it sees the memory: the hybrid block size, every page, the groups and what one request
    takes from each."""

    block_size: int
    mamba_block_size: int
    requested_block_size: int  # before the hybrid alignment (requested_block_size)
    attn_page_bytes_per_token: int
    state_page_bytes: int
    page_bytes: int
    conv_shape: tuple[int, int]
    temporal_shape: tuple[int, int, int]
    state_dtypes: tuple[str, str]
    groups: tuple[tuple[str, int], ...]  # (kind, layers) of each KV cache group
    state_pages: int  # pages one request holds in each state group ('all' mode: besides one for every block)
    state_page_per_block: bool  # 'all' mode: a state page for every mamba block of the request
    bytes_per_block: int

    def state_pages_at(self, length: int) -> int:
        """One state group's pages for a request of `length` tokens (v1/kv_cache_interface.py::
        MambaSpec.max_memory_usage_bytes: 'all' cdiv(length, mamba block) + speculative, else a fixed count)."""
        return self.state_pages + (_cdiv(length, self.mamba_block_size) if self.state_page_per_block else 0)

    def per_request(self, length: int) -> int:
        """Blocks one request of `length` tokens takes over all groups (_max_memory_usage_bytes_from_groups)."""
        return sum(_cdiv(length, self.block_size) if kind == "attention" else self.state_pages_at(length)
                   for kind, _ in self.groups)

    def group_plans(self, length: int) -> tuple[GroupPlan, ...]:
        return tuple(GroupPlan(kind=kind, layers=n,
                               block_size=self.block_size if kind == "attention" else self.mamba_block_size,
                               blocks_per_request=_cdiv(length, self.block_size) if kind == "attention"
                               else self.state_pages_at(length)) for kind, n in self.groups)


def layout(args: VllmArgs, geo: ModelGeometry) -> KVLayout:
    """The per-layer specs and their grouping (v1/core/kv_cache_planning.py::get_kv_cache_groups on the specs the
    platform aligned), with the bytes of one block (_get_kv_cache_bytes_per_block, layer-outer layout)."""
    conv, temporal = state_shapes(geo, args.tensor_parallel_size, args.num_speculative_tokens)
    dtypes = state_dtypes(args)
    state_page = state_page_bytes(conv, temporal, dtypes)
    attn_1 = attn_page_bytes_per_token(args, geo)
    block, mamba_block, checkpoint = hybrid_block_size(args, attn_1, _aligned_state_page(args, conv, temporal,
                                                                                        state_page))
    if block * attn_1 < state_page:
        raise EngineRefusal("assert self.page_size_padded >= page_size",
                            rule="v1/kv_cache_interface.py::MambaSpec.page_size_bytes (the KDA layers' float32 state "
                                 "outgrows the page sized from --mamba-ssm-cache-dtype)", kind="AssertionError")
    groups = tuple(_groups(len(geo.full_attention_layer_ids) + args.draft_attention_layers,
                           len(geo.linear_layer_ids)))
    # MambaSpec.max_memory_usage_bytes: align keeps 2 + spec + checkpoint pages, none 1 + spec, all one a block + spec
    state_pages = {"align": 2 + args.num_speculative_tokens + (checkpoint is not None),
                   "all": args.num_speculative_tokens}.get(args.mamba_cache_mode, 1 + args.num_speculative_tokens)
    return KVLayout(block_size=block, mamba_block_size=mamba_block, requested_block_size=requested_block_size(args),
                    attn_page_bytes_per_token=attn_1,
                    state_page_bytes=state_page, page_bytes=block * attn_1, conv_shape=conv, temporal_shape=temporal,
                    state_dtypes=dtypes, groups=groups, state_pages=state_pages,
                    state_page_per_block=args.mamba_cache_mode == "all",
                    bytes_per_block=max(n for _, n in groups) * block * attn_1)


def _aligned_state_page(args: VllmArgs, conv: tuple[int, int], temporal: tuple[int, int, int], layer_page: int) -> int:
    """The state page Platform._align_hybrid_block_size sizes the block from: the model class's
    get_mamba_state_*_from_config, which for Kimi-Linear reads --mamba-ssm-cache-dtype while its KDA layers keep the
    recurrent state float32 (engine/vllm/kda.py); the layer's page otherwise."""
    if not args.is_kda:
        return layer_page
    return state_page_bytes(conv, temporal, kda_class_dtypes(state_dtypes(args)[0], args.mamba_ssm_cache_dtype,
                                                             args.kda_ssm_cache_dtype_flag))


def plan(args: VllmArgs, geo: ModelGeometry, available_memory: int) -> KVPlan:
    """The KV cache config of one worker and its logged capacity: v1/core/kv_cache_planning.py::
    get_kv_cache_configs (null block held back for the checks, auto-fit, the admission check, num_blocks =
    available // bytes_per_block) and v1/core/kv_cache_utils.py::get_kv_cache_capacity."""
    lay = layout(args, geo)
    bpb = lay.bytes_per_block
    # get_kv_cache_configs holds the null block back for the checks (0.24.0 checks the whole memory)
    check = available_memory - bpb if args.checks_hold_null_block else available_memory
    length = args.max_model_len
    if args.auto_fit:
        length = _auto_fit(length, check, bpb, lay.per_request, args)
    _check_enough(check, bpb, length, lay.per_request, args)
    num_blocks = available_memory // bpb
    concurrency = num_blocks / lay.per_request(length)  # get_max_concurrency_for_kv_cache_config
    # kv_cache_utils.py::get_kv_cache_capacity (0.20.x: _report_kv_cache_config, 0.20.0 by blocks per group)
    tokens = (num_blocks // len(lay.groups) * min(lay.block_size, lay.mamba_block_size) if args.tokens_from_blocks
              else int(concurrency * length))
    page = lay.page_bytes
    return KVPlan(block_size=lay.block_size, mamba_block_size=lay.mamba_block_size,
                  mamba_cache_mode=args.mamba_cache_mode,
                  mamba_page_size_padded=page if page != lay.state_page_bytes else None, attn_page_bytes=page,
                  attn_page_bytes_at_requested_block=requested_block_size(args)
                  * lay.attn_page_bytes_per_token,
                  state_page_bytes=lay.state_page_bytes, page_bytes=page, conv_shape=lay.conv_shape,
                  temporal_shape=lay.temporal_shape, state_dtypes=lay.state_dtypes, groups=lay.group_plans(length),
                  bytes_per_block=bpb, num_blocks=num_blocks, max_model_len=length,
                  kv_cache_tokens=tokens, max_concurrency=concurrency)


def _format_gib(b: int) -> str:
    """utils/mem_utils.py::format_gib."""
    return f"{round(b / 2**30, 2)}"


def _longest_fit(original: int, memory: int, bytes_per_block: int, per_request: Callable[[int], int]) -> int:
    """v1/core/kv_cache_planning.py::_estimate_max_model_len_from_groups: the longest length in [1, original] whose
    request fits in `memory` (binary search), 0 when not even one token does."""
    return largest_true(1, original, lambda n: bytes_per_block * per_request(n) <= memory)


def _auto_fit(original: int, memory: int, bytes_per_block: int, per_request: Callable[[int], int],
              args: VllmArgs) -> int:
    """v1/core/kv_cache_planning.py::_auto_fit_max_model_len (in the release's args.planning_module): the longest
    fitting length, or a refusal."""
    best = _longest_fit(original, memory, bytes_per_block, per_request)
    if best <= 0:
        hint = _memory_hint(args) if args.refusal_wording == "0.34" else "Try increasing `gpu_memory_utilization`."
        raise EngineRefusal("Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single "
                            f"token. {hint}", rule=f"{args.planning_module}::_auto_fit_max_model_len")
    return best


_DOCS = "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
_CPU_HINT = ("Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU memory "
             "reservation on the CPU backend, despite its name).")


def _memory_hint(args: VllmArgs) -> str:
    """v1/core/kv_cache_planning.py::_more_kv_cache_memory_hint (0.34.0), before CUDA graph capture and warmup."""
    if not args.extensible_kv_cache:
        return _CPU_HINT
    used_by = "the model and its activations"
    if args.gpu_memory_utilization < 1.0:
        return (f"The KV cache gets what is left after {used_by} within `gpu_memory_utilization`="
                f"{args.gpu_memory_utilization}; increase it (with the extensible KV cache it defaults to 1.0) or "
                "decrease `max_model_len` or `max_num_seqs`.")
    return (f"The extensible KV cache already takes all device memory left after {used_by}; decrease `max_model_len` "
            "or `max_num_seqs`, or the model needs a device with more memory.")


def _check_enough(memory: int, bytes_per_block: int, length: int, per_request: Callable[[int], int],
                  args: VllmArgs) -> None:
    """v1/core/kv_cache_planning.py::_check_enough_kv_cache_memory (in the release's args.planning_module), with the
    release's messages (behaviours.Release.refusal_wording)."""
    rule = f"{args.planning_module}::_check_enough_kv_cache_memory"
    wording = args.refusal_wording
    if memory <= 0:
        hint = {"0.20": "Try increasing `gpu_memory_utilization` when initializing the engine.", "0.22": _CPU_HINT,
                "0.34": _memory_hint(args)}[wording]
        raise EngineRefusal(f"No available memory for the cache blocks. {hint} {_DOCS}", rule=rule)
    needed = bytes_per_block * per_request(length)
    if needed <= memory:
        return
    estimated = _longest_fit(length, memory, bytes_per_block, per_request)
    hint = (f"Based on the available memory, the estimated maximum model length is {estimated}. "
            if estimated > 0 else "")
    advice = {"0.20": "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
                      "engine.",
              "0.22": "Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or "
                      "decreasing `max_model_len` when initializing the engine.",
              "0.34": f"{_memory_hint(args)} Decreasing `max_model_len` also reduces what is needed."}[wording]
    model = "models's" if wording == "0.20" else "model's"
    raise EngineRefusal(
        f"To serve at least one request with the {model} max seq len ({length}), ({_format_gib(needed)} GiB KV cache "
        f"is needed, which is larger than the available KV cache memory ({_format_gib(memory)} GiB). {hint}"
        f"{advice} {_DOCS}", rule=rule)
