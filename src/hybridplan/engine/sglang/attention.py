"""The full-attention backend sglang 0.5.23 picks for a platform, and the sizing rules that hang on it.

arg_groups/attention_hook.py::handle_attention_backend_compatibility runs after the memory defaults and the mamba
radix validation, before the page-size default and the speculative hook, so it sees only a typed --page-size and
--speculative-eagle-topk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hybridplan.engine.sglang.args import Platform, env_bool

if TYPE_CHECKING:
    from hybridplan.engine.sglang.resolver import Resolver

HOOK = "arg_groups/attention_hook.py::handle_attention_backend_compatibility"
AITER_CONTEXT = 8192  # above this context the aiter backend scales mem_fraction_static
AITER_FRACTION = 0.85
# arg_groups/model_overrides: per-model Blackwell defaults (backend, some also the page size) not modelled here, and
# whether they key on every Blackwell (is_blackwell, SM100-SM12x) or on SM100/SM103 only (is_sm100)
BLACKWELL_OVERRIDES = {
    "Qwen3NextForCausalLM": ("qwen3_5.py", False), "Qwen3_5ForConditionalGeneration": ("qwen3_5.py", False),
    "Qwen3_5MoeForConditionalGeneration": ("qwen3_5.py", False), "FalconH1ForCausalLM": ("falcon_h1.py", False),
    "GraniteMoeHybridForCausalLM": ("granitemoehybrid.py", False), "Lfm2ForCausalLM": ("lfm2.py", False),
    "Lfm2MoeForCausalLM": ("lfm2.py", False), "NemotronHForCausalLM": ("nemotron_h.py", True),
    "NemotronHPuzzleForCausalLM": ("nemotron_h.py", True), "KimiK3ForConditionalGeneration": ("kimi_k3.py", False),
}


def no_spec_or_topk_one(topk: int | None, page: int | None) -> bool:
    """utils/common.py::is_no_spec_infer_or_topk_one: no topk yet, or topk 1 with pages of one token."""
    return topk is None or (topk == 1 and page in (None, 1))


def default_backend(platform: Platform, *, mla: bool, mla_heads: int, topk: int | None, page: int | None,
                    algorithm: str | None, asymmetric_kv: bool) -> str | None:
    """arg_groups/model_override_base.py::get_default_attn_backend for an in-tree CUDA or ROCm device.

    None where the engine's answer cannot be told: a CUDA card of unknown capability, or another device (their
    platform hooks pick it). CUDA is taken as >= 12.3 with flashinfer installed, and the hybrids have no attention
    sinks. `mla_heads` is get_num_kv_heads(tp_size) (only ROCm's MLA branch reads it).
    """
    hip = platform.device == "hip"
    if not hip and (platform.device != "cuda" or platform.sm is None):
        return None
    hopper = not hip and platform.sm is not None and 90 <= platform.sm < 100  # is_hopper_with_cuda_12_3
    sm100 = not hip and platform.is_sm100
    if mla:
        if hopper:
            return "fa3"
        if sm100:
            return "flashinfer"
        if hip:
            return "aiter" if mla_heads in (16, 128) else "triton"  # aiter MLA takes 16 or 128 heads
        return "triton"
    simple = no_spec_or_topk_one(topk, page)
    if hopper and simple:
        return "fa3"
    if sm100 and simple and (algorithm is None or topk is not None or algorithm.upper() == "DFLASH"):
        return "fa4" if asymmetric_kv else "trtllm_mha"
    if hip:
        return "aiter"
    return "flashinfer"


def _mla_heads(r: Resolver) -> int:
    """configs/model_config.py::get_num_kv_heads(tp_size): max(1, total KV heads // tp)."""
    heads: int = r.geo.kv.total_kv_heads // r["tp_size"]
    return max(1, heads)


def resolve_attention_backend(r: Resolver) -> None:
    """overrides.py::_attention_backend_default and _attention_backend_fa3_fp8_fallback, then the aiter
    mem-fraction rule of handle_attention_backend_compatibility."""
    geo = r.geo
    if r["prefill_attention_backend"] is not None and r["prefill_attention_backend"] == r["decode_attention_backend"]:
        r.set("overrides.py::_attention_backend_default (prefill = decode backend)",
              attention_backend=r["prefill_attention_backend"])
    elif r["attention_backend"] is None:
        backend = default_backend(r.platform, mla=geo.kv.kind == "mla", mla_heads=_mla_heads(r),
                                  topk=r["speculative_eagle_topk"], page=r["page_size"],
                                  algorithm=r["speculative_algorithm"],
                                  asymmetric_kv=geo.kv.kind == "mha" and geo.kv.head_dim != geo.kv.v_head_dim)
        if backend is not None:
            r.set_default(f"model_override_base.py::get_default_attn_backend ({r.platform.device})",
                          attention_backend=backend)
            override, every_blackwell = BLACKWELL_OVERRIDES.get(geo.architecture, ("", False))
            if override and r.platform.device == "cuda" and (r.platform.is_sm100 or (
                    every_blackwell and r.platform.sm is not None and 100 <= r.platform.sm < 130)):
                r.notes.append(f"arg_groups/model_overrides/{override} may choose another attention backend (and "
                               f"page size) for {geo.architecture} on Blackwell; not modelled, priced for {backend}")
    if r["attention_backend"] == "fa3" and r["kv_cache_dtype"] == "fp8_e5m2":
        r.set("overrides.py::_attention_backend_fa3_fp8_fallback", attention_backend="triton")
    _aiter_fraction(r)


def _aiter_fraction(r: Resolver) -> None:
    """aiter above 8192 tokens of context scales mem_fraction_static by 0.85, a typed one too unless
    SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION is set (0.5.19 on)."""
    mfs = r["mem_fraction_static"]
    if r["attention_backend"] != "aiter" or r["context_length"] <= AITER_CONTEXT or mfs is None:
        return
    # the env exists from 0.5.19 (attention_hook.py::handle_attention_backend_compatibility); 0.5.18 always scales
    # (server_args.py::_handle_attention_backend_compatibility)
    if (r.sw.aiter_honors_explicit_mem_fraction_env and r.explicit("mem_fraction_static")
            and env_bool(r.env, "SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION")):
        r.notes.append(f"attention_backend=aiter with context_len={r['context_length']} (>8192) normally scales "
                       "mem_fraction_static by 0.85; SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION keeps "
                       f"{mfs} as given")
        return
    r.set(f"{HOOK} (aiter, context_len {r['context_length']} > {AITER_CONTEXT}: x {AITER_FRACTION})",
          mem_fraction_static=mfs * AITER_FRACTION)
