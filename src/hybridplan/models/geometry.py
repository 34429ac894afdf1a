"""Model geometry: what the engine needs from config.json to size the state pool and the KV pool.

Pure data and arithmetic; the shape builders mirror sglang/srt/configs/mamba_utils.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Union

from hybridplan.dtypes import itemsize
from hybridplan.errors import EngineRefusal


def _divide(a: int, b: int) -> int:
    """Exact division or the engine's refusal (distributed/utils.py::divide)."""
    if b <= 0 or a % b != 0:
        raise EngineRefusal(
            f"{a} is not divisible by {b}",
            rule="distributed/utils.py::divide (via configs/mamba_utils.py state shape)",
            kind="AssertionError",
        )
    return a // b


def _k_heads_per_tp(n_heads: int, tp: int) -> int:
    """Key heads per rank before any group extension: n / tp, or ceil(n / tp) when it does not divide."""
    return n_heads // tp if n_heads % tp == 0 else -(-n_heads // tp)


@dataclass(frozen=True, kw_only=True)
class StateShape:
    """Per-layer, per-slot state tensors on one rank: conv tensors and the temporal (SSM) tensor."""

    conv: tuple[tuple[int, ...], ...]
    temporal: tuple[int, int, int]
    num_k_heads_per_tp: int
    conv_window_dedup: bool  # False for KDA's (K-1, dim) layout

    @property
    def conv_numel(self) -> int:
        total = 0
        for shape in self.conv:
            n = 1
            for d in shape:
                n *= d
            total += n
        return total

    @property
    def temporal_numel(self) -> int:
        h, d, s = self.temporal
        return h * d * s


@dataclass(frozen=True, kw_only=True)
class Mamba2Mixer:
    """Arguments of `Mamba2StateShape.create` (GDN, Mamba2, Nemotron-H, Falcon-H1, Granite, LFM2)."""

    intermediate_size: int
    n_groups: int
    num_heads: int  # for LFM2 the engine passes tp itself; see `heads_follow_tp`
    head_dim: int
    state_size: int
    conv_kernel: int
    heads_follow_tp: bool = False

    def shape(self, tp: int) -> StateShape:
        """Mirrors configs/mamba_utils.py::Mamba2StateShape.create."""
        n_groups = self.n_groups
        num_heads = tp if self.heads_follow_tp else self.num_heads
        k_per_tp = _k_heads_per_tp(n_groups, tp)
        if n_groups % tp != 0:
            n_groups += tp - n_groups  # extra_groups_for_head_shards
        conv_dim = self.intermediate_size + 2 * n_groups * self.state_size
        return StateShape(
            conv=((_divide(conv_dim, tp), self.conv_kernel - 1),),
            temporal=(_divide(num_heads, tp), self.head_dim, self.state_size),
            num_k_heads_per_tp=k_per_tp,
            conv_window_dedup=True,
        )


@dataclass(frozen=True, kw_only=True)
class Mamba1Mixer:
    """Arguments of `Mamba2StateShape.create_full_rank` (Mamba-1, Falcon-Mamba)."""

    intermediate_size: int
    state_size: int
    conv_kernel: int

    def shape(self, tp: int) -> StateShape:
        """Mirrors configs/mamba_utils.py::Mamba2StateShape.create_full_rank."""
        if self.intermediate_size % tp != 0:
            raise EngineRefusal(
                f"Mamba-1 intermediate_size ({self.intermediate_size}) must be divisible "
                f"by tp_world_size ({tp})",
                rule="configs/mamba_utils.py::Mamba2StateShape.create_full_rank",
                kind="AssertionError",
            )
        per_tp = self.intermediate_size // tp
        return StateShape(
            conv=((per_tp, self.conv_kernel - 1),),
            temporal=(per_tp, 1, self.state_size),
            num_k_heads_per_tp=1,
            conv_window_dedup=True,
        )


@dataclass(frozen=True, kw_only=True)
class KdaMixer:
    """Arguments of `KimiLinearStateShape.create` (Kimi Linear, Kimi K3)."""

    num_heads: int
    head_dim: int
    num_k_heads: int
    head_k_dim: int
    conv_kernel: int

    def shape(self, tp: int) -> StateShape:
        """Mirrors configs/mamba_utils.py::KimiLinearStateShape.create (window axis first)."""
        k_per_tp = _k_heads_per_tp(self.num_k_heads, tp)
        proj = _divide(self.num_heads * self.head_dim, tp)
        proj_k = _divide(self.num_k_heads * self.head_k_dim, tp)
        return StateShape(
            conv=((self.conv_kernel - 1, proj + 2 * proj_k),),
            temporal=(_divide(self.num_heads, tp), self.head_dim, self.head_dim),
            num_k_heads_per_tp=k_per_tp,
            conv_window_dedup=False,
        )


Mixer = Union[Mamba2Mixer, Mamba1Mixer, KdaMixer]


class StateTP(str, Enum):
    """Which parallel width shards the state (configs/*.py `mamba2_cache_params`)."""

    ATTN_TP = "attn_tp"  # most hybrids: get_parallel().attn_tp_size
    LINEAR_ATTN_TP = "linear_attn_tp"  # GDN: runtime_context.py::linear_attn_tp_size
    TP = "tp"  # pure Mamba / Mamba2: global tp_size


@dataclass(frozen=True, kw_only=True)
class KVSpec:
    """How the full-attention layers store KV: MHA (per KV head) or MLA (a latent per token)."""

    kind: str  # "mha" | "mla" | "none"
    total_kv_heads: int = 0
    head_dim: int = 0
    v_head_dim: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0

    def kv_heads_per_rank(self, attn_tp: int, dcp: int = 1) -> int:
        """Mirrors configs/model_config.py::get_num_kv_heads: max(1, total // (tp / dcp))."""
        if self.kind != "mha" or self.total_kv_heads == 0:
            return 0
        return max(1, self.total_kv_heads // max(1, attn_tp // dcp))

    def cell_bytes(self, *, layers: int, attn_tp: int, kv_dtype: str, dcp: int = 1, mxfp8: bool = False) -> int:
        """Bytes per token over `layers` full-attention layers.

        Mirrors model_executor/pool_configurator.py::DefaultPoolConfigurator._compute_cell_size (MHA / MLA).
        FP4 KV is priced by `fp4_cell_bytes`.
        """
        size = itemsize(kv_dtype)
        if self.kind == "mla":
            return (self.kv_lora_rank + self.qk_rope_head_dim) * layers * size
        if self.kind == "none":
            return 0
        n = self.kv_heads_per_rank(attn_tp, dcp)
        cell = n * (self.head_dim + self.v_head_dim) * layers * size
        if mxfp8:
            cell += (n * (self.head_dim + self.v_head_dim) * layers) // 32
        return cell


@dataclass(frozen=True, kw_only=True)
class VisionTower:
    """hf_config.vision_config as the engine's config class builds it: the two attributes the VLM memory factor
    reads (None: the attribute is absent, so the engine's getattr default applies)."""

    num_hidden_layers: int | None
    hidden_size: int | None


@dataclass(frozen=True, kw_only=True)
class ModelGeometry:
    """Everything about one checkpoint that the engine's sizing reads, with where each part came from."""

    family: str  # gdn | kda | mamba2 | mamba1 | conv
    model_type: str
    architecture: str  # architectures[0], which decides the engine's arch lists
    num_hidden_layers: int
    linear_layer_ids: tuple[int, ...]
    full_attention_layer_ids: tuple[int, ...]
    mixer: Mixer
    state_tp: StateTP
    kv: KVSpec
    config_dtype: str | None  # the text config's dtype / torch_dtype, as written
    config_ssm_dtype: str | None  # the config's mamba_ssm_dtype, when the engine reads it (None otherwise)
    kv_cache_quant_algo: str | None  # the checkpoint's quant config view of KV (e.g. "FP8")
    quant_method: str | None  # quantization_config.quant_method / quant_algo, for display and weights
    quantization: str | None = None  # ModelConfig.quantization for the checkpoint (e.g. modelopt_mixed)
    has_quantization_config: bool = False  # config.json has a root quantization_config (an hf_config attribute)
    is_multimodal: bool
    context_length: int  # derived like utils/hf_transformers/common.py::get_context_length
    num_nextn_predict_layers: int | None  # as ModelConfig reads it from the text config
    mamba_chunk_size: int | None  # the config's mamba_chunk_size (None: the engine's FLA default)
    vision: VisionTower | None = None  # None: the engine's hf_config has no vision_config
    source: str = ""  # where the config came from (catalog id, path)
    notes: tuple[str, ...] = field(default_factory=tuple)  # provenance remarks (e.g. engine defaults used)

    @property
    def is_gdn(self) -> bool:
        return self.family == "gdn"

    @property
    def is_kda(self) -> bool:
        return self.family == "kda"

    def state_shape(self, tp: int) -> StateShape:
        """State tensors per layer per slot on one state-TP rank."""
        return self.mixer.shape(tp)

    def state_bytes_per_slot(self, tp: int, ssm_dtype: str, conv_dtype: str = "bfloat16") -> int:
        """Bytes of one state slot over all state layers (configs/mamba_utils.py::BaseLinearStateParams.mamba_cache_per_req)."""
        shape = self.state_shape(tp)
        per_layer = shape.conv_numel * itemsize(conv_dtype) + shape.temporal_numel * itemsize(ssm_dtype)
        return per_layer * len(self.linear_layer_ids)

    def replayssm_ring_bytes(self, tp: int, record_len: int, conv_dtype: str = "bfloat16", *,
                             compact: bool = True) -> int:
        """ReplaySSM spec-verify ring bytes per request (BaseLinearStateParams.replayssm_ring_bytes_per_req).

        KDA keeps raw v/k, beta, vector g and its d/k rings. Other models keep compact d/k, scalar g and, below
        fp32, low parts of d/k (`compact`, 0.5.20 on); before 0.5.20 they kept raw v/k, fp32 beta and scalar g.
        """
        shape = self.state_shape(tp)
        hv, v_dim, k_dim = shape.temporal
        h_k = shape.num_k_heads_per_tp
        cb = itemsize(conv_dtype)
        L = record_len
        if self.is_kda:
            per_layer = hv * L * v_dim * cb + h_k * L * k_dim * cb + hv * L * 4 + hv * L * k_dim * 4
            per_layer += hv * L * v_dim * cb + h_k * L * k_dim * cb
        elif not compact:
            per_layer = hv * L * v_dim * cb + h_k * L * k_dim * cb + hv * L * 4 + hv * L * 4
        else:
            per_layer = hv * L * v_dim * cb + h_k * L * k_dim * cb + hv * L * 4
            if conv_dtype != "float32":
                per_layer += hv * L * v_dim * cb + h_k * L * k_dim * cb
        return per_layer * len(self.linear_layer_ids)

    def kv_bytes_per_token(self, attn_tp: int, kv_dtype: str, *, dcp: int = 1, layers: int | None = None) -> int:
        """KV bytes per token over the full-attention layers (or `layers` of them, e.g. one PP stage)."""
        n = len(self.full_attention_layer_ids) if layers is None else layers
        return self.kv.cell_bytes(layers=n, attn_tp=attn_tp, kv_dtype=kv_dtype, dcp=dcp)


@dataclass(frozen=True, kw_only=True)
class DraftGeometry:
    """A speculative draft checkpoint as the engine reads it in draft mode."""

    architecture: str
    model_type: str
    num_hidden_layers: int
    num_attention_layers: int
    num_nextn_predict_layers: int | None  # after the draft-mode rewrite (configs/model_config.py)
    kv: KVSpec
    config_dtype: str | None
    block_size: int | None  # dflash_config.block_size or top-level block_size
    dspark_block_size: int | None  # top-level dspark_block_size
    # speculative/dspark_components/dspark_config.py::parse_dspark_draft_config: dspark_markov_rank, else the nested
    # config's markov_rank (dflash_config and dspark_config merged, 0.5.23; dspark_config alone before), else the text
    # config's / top-level markov_rank, else 0
    markov_rank: int
    markov_rank_dspark_config_only: int
    source: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def dspark_gamma(self) -> int | None:
        """speculative/dspark_components/dspark_config.py::parse_dspark_draft_config: dspark_block_size, else block_size."""
        return self.dspark_block_size if self.dspark_block_size is not None else self.block_size
