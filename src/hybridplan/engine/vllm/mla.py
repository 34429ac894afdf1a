"""vLLM's attention backend for MLA layers on a CUDA card, and the kernel-block contract the hybrid block size follows.

The same in both modelled releases (0.33.0, 0.24.0): platforms/cuda.py::_get_backend_priorities orders the dense MLA
backends by the card's major compute capability, and CudaPlatform.get_valid_backends takes the first whose
validate_configuration passes (compute capability, KV cache dtype, the user's --block-size when given). Each
backend's facts below are its class's own (v1/attention/backends/mla/<file>.py). Assumed, as a stock CUDA wheel
ships them: the FA3 MLA and FlashMLA kernels are built (flash_attn_supports_mla, is_flashmla_dense_supported) and
the optional tokenspeed_mla package is not installed.
"""

from __future__ import annotations

from dataclasses import dataclass

from hybridplan.errors import BadInput

DEFAULT_BLOCK_SIZE = 16  # config/cache.py::CacheConfig.DEFAULT_BLOCK_SIZE
_FULL_KV = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3")


@dataclass(frozen=True, kw_only=True)
class AttentionBackend:
    """What the block-size rules read of one attention backend class."""

    name: str  # AttentionBackendEnum name
    kernel_block_sizes: tuple[int, ...]  # get_supported_kernel_block_sizes, MultipleOf(n) as n
    majors: tuple[int, ...] | None = None  # supports_compute_capability (None: every card)
    kv_cache_dtypes: tuple[str, ...] = _FULL_KV  # supported_kv_cache_dtypes
    rule: str = ""

    @property
    def min_kernel_block(self) -> int:
        """min(s.base if MultipleOf else s): what Platform._align_hybrid_block_size aligns to."""
        return min(self.kernel_block_sizes)

    def supports_block_size(self, block: int | None) -> bool:
        """v1/attention/backend.py::AttentionBackend.supports_block_size: any multiple of a supported size."""
        return block is None or any(block % s == 0 for s in self.kernel_block_sizes)

    def preferred_block_size(self, default: int = DEFAULT_BLOCK_SIZE) -> int:
        """AttentionBackend.get_preferred_block_size: the default when supported, else the smallest kernel block."""
        return default if self.supports_block_size(default) else self.min_kernel_block


# v1/attention/backends/flash_attn.py::FlashAttentionBackend (the MHA hybrids' backend)
FLASH_ATTN = AttentionBackend(name="FLASH_ATTN", kernel_block_sizes=(16,),
                              rule="v1/attention/backends/flash_attn.py::FlashAttentionBackend")

_MLA = {b.name: b for b in (
    AttentionBackend(name="FLASH_ATTN_MLA", kernel_block_sizes=(16,), majors=(9,),
                     kv_cache_dtypes=("auto", "float16", "bfloat16"),
                     rule="v1/attention/backends/mla/flashattn_mla.py::FlashAttnMLABackend"),
    AttentionBackend(name="FLASHMLA", kernel_block_sizes=(64,), majors=(9, 10),
                     rule="v1/attention/backends/mla/flashmla.py::FlashMLABackend"),
    # supports_combination: qk_nope_head_dim in [64, 128, 192] (Kimi-Linear: 128)
    AttentionBackend(name="FLASHINFER_MLA", kernel_block_sizes=(32, 64), majors=(10,),
                     rule="v1/attention/backends/mla/flashinfer_mla.py::FlashInferMLABackend"),
    AttentionBackend(name="CUTLASS_MLA", kernel_block_sizes=(128,), majors=(10,),
                     rule="v1/attention/backends/mla/cutlass_mla.py::CutlassMLABackend"),
    AttentionBackend(name="TRITON_MLA", kernel_block_sizes=(16,),
                     rule="v1/attention/backends/mla/triton_mla.py::TritonMLABackend"),
)}

# platforms/cuda.py::_get_backend_priorities(use_mla=True), dense backends, by major compute capability (TOKENSPEED_MLA,
# behind FLASHINFER_MLA on sm10x, is rejected without the tokenspeed_mla package; the sparse ones never take a dense
# layer)
_PRIORITIES = {10: ("FLASHINFER_MLA", "CUTLASS_MLA", "FLASH_ATTN_MLA", "FLASHMLA", "TRITON_MLA"),
               12: ("TRITON_MLA",)}
_OTHER = ("FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA")


def _valid(b: AttentionBackend, major: int, kv_cache_dtype: str, block_size: int | None) -> bool:
    """The parts of AttentionBackend.validate_configuration a dense MLA launch varies."""
    return (b.majors is None or major in b.majors) and kv_cache_dtype in b.kv_cache_dtypes \
        and b.supports_block_size(block_size)


def select_mla_backend(sm: int | None, kv_cache_dtype: str, block_size: int | None,
                       requested: str | None = None) -> AttentionBackend:
    """platforms/cuda.py::CudaPlatform.get_attn_backend_cls: --attention-backend when given (refused when it cannot
    run the launch), else the first backend of the card's priority list that supports the card, the KV cache dtype
    and a user-given block size (v1/attention/selector.py::get_attn_backend passes block_size only when the user set
    it). An unknown card is taken as sm90."""
    major = (sm or 90) // 10
    if requested is not None:
        chosen = _MLA.get(requested.upper())
        if chosen is None:
            raise BadInput(f"--attention-backend: {requested!r} is not a modelled MLA backend "
                           f"(one of {', '.join(_MLA)})")
        if not _valid(chosen, major, kv_cache_dtype, block_size):
            raise BadInput(f"--attention-backend: {chosen.name} cannot run --kv-cache-dtype {kv_cache_dtype}"
                           + (f" with --block-size {block_size}" if block_size else "") + f" on sm{sm or 90} "
                           "(vLLM: 'Selected backend ... is not valid for this configuration')")
        return chosen
    for name in _PRIORITIES.get(major, _OTHER):
        if _valid(_MLA[name], major, kv_cache_dtype, block_size):
            return _MLA[name]
    raise BadInput(f"vLLM engine model: no MLA attention backend takes --kv-cache-dtype {kv_cache_dtype}"
                   + (f" with --block-size {block_size}" if block_size else "") + f" on sm{sm or 90} "
                   "(platforms/cuda.py::CudaPlatform.get_attn_backend_cls refuses the launch)")
