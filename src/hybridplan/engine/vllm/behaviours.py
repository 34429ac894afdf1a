"""What changes between the modelled vLLM releases: each release's switches, every change cited to the file and
function it mirrors (checked against that release's own code by tests/conformance/test_vllm_conformance.py).

Every minor release from 0.20.0 to 0.34.0 and every patch release is modelled. A release lists what it changed from
the release before it (`changes`); a patch release that changed nothing the model reads says what it did change.
The releases come oldest first; the newest is the default."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

# The wording of the memory refusals (_check_enough_kv_cache_memory, _auto_fit_max_model_len), named by the release
# that introduced it: 0.20 "the models's max seq len", 0.22 names the CPU backend, 0.34 a hint that follows the
# extensible KV cache
Wording = Literal["0.20", "0.22", "0.34"]


@dataclass(frozen=True, kw_only=True)
class Change:
    """One rule a release has in its own way, and where."""

    what: str
    rule: str  # file::function in that release


@dataclass(frozen=True, kw_only=True)
class Release:
    """The switches the engine model reads for one vLLM release."""

    version: str
    hybrid_prefix_caching: bool  # prefix caching on by default for generative hybrids
    mamba_cache_mode_flag: bool  # --mamba-cache-mode is honoured (else derived from prefix caching)
    # architectures whose model class implements SupportsMambaPrefixCaching (the classes 'all' mode runs for)
    mamba_prefix_caching_archs: tuple[str, ...]
    # under prefix caching such a class runs 'all' unless --mamba-cache-mode says otherwise (before 0.28.0; from then
    # on only `--mamba-cache-mode all` asks for it, and 0.32.0 drops the mode)
    all_mode_default: bool
    mamba2_prefill_checkpoints: bool  # MambaMixer2 keeps a prefill checkpoint page in align mode (0.32.0 on)
    gdn_prefill_checkpoints: bool  # FlashInfer's GDN prefill keeps one, on its 64-token grid (0.33.0 on)
    large_card_batch_tier: bool  # get_batch_defaults has the >= 160 GiB tier (0.28.0 on)
    checks_hold_null_block: bool  # the admission check and auto-fit leave the null block out (0.29.0 on)
    # the logged `GPU KV cache size` is num_blocks // groups x the smallest block size (0.20.0), not
    # int(max concurrency x max_model_len)
    tokens_from_blocks: bool = False
    refusal_wording: Wording = "0.22"
    changes: tuple[Change, ...] = ()
    # MLA hybrids: the attention block is a multiple of this (0.27.0 on: 128 for the TRTLLM/FlashInfer MLA decode
    # kernels; 1: none)
    mla_hybrid_block_alignment: int = 128
    kda_ssm_cache_dtype_flag: bool = True  # Kimi-Linear's model class reads --mamba-ssm-cache-dtype (0.30.0 on)
    # KDA state as one fused q/k/v conv state and the recurrent state (0.23.0 on; before, three conv states apart:
    # not modelled, Kimi-Linear is refused there)
    kda_fused_conv_state: bool = True
    # the extensible KV cache is on by default on CUDA (0.34.0): gpu_memory_utilization defaults to 1.0 and the
    # cache is sized from the memory measured after CUDA graph capture and warmup
    extensible_kv_cache: bool = False
    # config/cache.py::CacheConfig.DEFAULT_BLOCK_SIZE: the block size asked of the attention backend when --block-size
    # is not given (its preferred size when it supports it); 64 from 0.34.0
    default_block_size: int = 16
    # where the KV cache planning lives (0.33.0 split it out of kv_cache_utils.py) and the function that logs the
    # capacity: the provenance explain and logs check name
    planning_module: str = "v1/core/kv_cache_planning.py"
    capacity_rule: str = "v1/core/kv_cache_utils.py::get_kv_cache_capacity"

    @property
    def prefill_checkpoints(self) -> bool:
        """Whether any state layer keeps a prefill checkpoint page in this release."""
        return self.mamba2_prefill_checkpoints or self.gdn_prefill_checkpoints


def _patch(base: Release, version: str, what: str, files: str) -> Release:
    """A patch release whose planning, checks and parser are its minor release's (`what` it changed, in `files`)."""
    return replace(base, version=version, changes=(Change(what=f"as {base.version} for everything modelled; the "
                                                               f"patch changes {what}", rule=files),))


_UTILS = "v1/core/kv_cache_utils.py"
_PARSER = "engine/arg_utils.py::EngineArgs.add_cli_args"

V0_20_0 = Release(
    version="0.20.0", hybrid_prefix_caching=False, mamba_cache_mode_flag=True,
    mamba_prefix_caching_archs=("BambaForCausalLM", "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM",
                                "JambaForCausalLM", "MambaForCausalLM", "Mamba2ForCausalLM", "NemotronHForCausalLM",
                                "NemotronHPuzzleForCausalLM", "Zamba2ForCausalLM"),
    all_mode_default=True, mamba2_prefill_checkpoints=False, gdn_prefill_checkpoints=False,
    large_card_batch_tier=False, checks_hold_null_block=False, tokens_from_blocks=True,
    refusal_wording="0.20", mla_hybrid_block_alignment=1, kda_ssm_cache_dtype_flag=False,
    kda_fused_conv_state=False, planning_module=_UTILS, capacity_rule=f"{_UTILS}::_report_kv_cache_config",
    changes=(
        Change(what="prefix caching is off by default for generative hybrid models (state runs in 'none' mode "
                    "unless --enable-prefix-caching)",
               rule="config/model.py::ModelConfig.is_prefix_caching_supported"),
        Change(what="--mamba-cache-mode is honoured; under prefix caching 'none' becomes 'all' for a model class with "
                    "SupportsMambaPrefixCaching (Bamba, Falcon-H1, Granite-4.0-H, Jamba, Mamba, Mamba2, Nemotron-H, "
                    "Zamba2) and 'align' otherwise (the GDN hybrids), and 'align' for every class under speculative "
                    "decoding (not reached here: MTP is modelled on the GDN hybrids only)",
               rule="model_executor/models/config.py::MambaModelConfig.verify_and_update_config"),
        Change(what="'all' mode keeps a state page for every mamba block of a request (cdiv(max_model_len, block) a "
                    "state group, no speculative pages) and sizes the block from lcm(the model's mamba chunk or "
                    "--mamba-block-size, the kernel block), the mamba block with it",
               rule="v1/kv_cache_interface.py::MambaSpec.max_memory_usage_bytes, "
                    "platforms/interface.py::Platform._align_hybrid_block_size"),
        Change(what="no prefill checkpoint page: align mode keeps 2 + speculative state pages per request",
               rule="v1/kv_cache_interface.py::MambaSpec.max_memory_usage_bytes"),
        Change(what="batch defaults have two tiers: >= 70 GiB and not an A100 (1024 / 8192), else 256 / 2048",
               rule="engine/arg_utils.py::EngineArgs.get_batch_defaults"),
        Change(what="the admission check and the max_model_len auto-fit use the whole available memory",
               rule=f"{_UTILS}::get_kv_cache_configs"),
        Change(what="the memory refusals read \"the models's max seq len\" and do not name the CPU backend",
               rule=f"{_UTILS}::_check_enough_kv_cache_memory"),
        Change(what="the logged `GPU KV cache size` is num_blocks // KV cache groups x the smallest group block size",
               rule=f"{_UTILS}::_report_kv_cache_config"),
        Change(what="MLA hybrids: the attention block is raised only to the MLA backend's smallest kernel block",
               rule="platforms/interface.py::Platform._align_hybrid_block_size"),
        Change(what="the KDA state is four tensors (q, k and v conv states apart, then the recurrent state): not "
                    "modelled, so Kimi-Linear is refused; its model class ignores --mamba-ssm-cache-dtype",
               rule="model_executor/layers/mamba/mamba_utils.py::MambaStateShapeCalculator.kda_state_shape"),
        Change(what="the `vllm serve` parser: 241 flags; --mamba-cache-dtype and --mamba-ssm-cache-dtype take auto / "
                    "float16 / float32 (no bfloat16); --no-enable-prefix-caching (BooleanOptionalAction)",
               rule=_PARSER),
    ))

V0_20_1 = replace(V0_20_0, version="0.20.1", tokens_from_blocks=False, changes=(
    Change(what="the logged `GPU KV cache size` is int(max concurrency x max_model_len)",
           rule=f"{_UTILS}::_report_kv_cache_config"),))

V0_20_2 = _patch(V0_20_1, "0.20.2", "only the admission cap of sliding-window and chunked-local layers at "
                 "allocation (not a hybrid GDN / Mamba2 / KDA model's)",
                 "v1/core/single_type_kv_cache_manager.py::SingleTypeKVCacheManager.get_num_blocks_to_allocate")

V0_21_0 = replace(V0_20_1, version="0.21.0", changes=(
    Change(what="the `vllm serve` parser: 249 flags (--safetensors-prefetch-*, --mm-encoder-* added)", rule=_PARSER),
    Change(what="the hybrid block size also covers TurboQuant KV cache dtypes (not modelled)",
           rule="platforms/interface.py::Platform._align_hybrid_block_size"),
))

V0_22_0 = replace(V0_21_0, version="0.22.0", refusal_wording="0.22", changes=(
    Change(what="no speculative exception: under prefix caching a SupportsMambaPrefixCaching class runs 'all' with "
                "or without speculative decoding", rule="model_executor/models/config.py::"
                                                        "MambaModelConfig.verify_and_update_config"),
    Change(what="'all' mode keeps the speculative state pages too (cdiv(max_model_len, block) + speculative)",
           rule="v1/kv_cache_interface.py::MambaSpec.max_memory_usage_bytes"),
    Change(what="the memory refusals read \"the model's max seq len\" and say `gpu_memory_utilization` also controls "
                "CPU memory on the CPU backend", rule=f"{_UTILS}::_check_enough_kv_cache_memory"),
    Change(what="the `vllm serve` parser: 263 flags; --mamba-cache-dtype and --mamba-ssm-cache-dtype take bfloat16",
           rule=f"{_PARSER}, config/cache.py::CacheConfig"),
))

V0_22_1 = _patch(V0_22_0, "0.22.1", "only the Mellum model and the zentorch linear kernels (AMD CPUs)",
                 "model_executor/models/registry.py::_TEXT_GENERATION_MODELS")

V0_23_0 = replace(V0_22_0, version="0.23.0", kda_fused_conv_state=True, changes=(
    Change(what="the KDA state is one fused q/k/v conv state and the recurrent state: Kimi-Linear is modelled",
           rule="model_executor/layers/mamba/mamba_utils.py::MambaStateShapeCalculator.kda_state_shape"),
    Change(what="the `vllm serve` parser: as 0.22.0's but --all2all-backend and --eplb-config", rule=_PARSER),
))

V0_24_0 = replace(
    V0_23_0, version="0.24.0", mamba_prefix_caching_archs=tuple(
        a for a in V0_23_0.mamba_prefix_caching_archs if a != "BambaForCausalLM"),
    capacity_rule=f"{_UTILS}::get_kv_cache_capacity", changes=(
        Change(what="Bamba is no longer served (the registry names 0.23.0 its last release), so it leaves the 'all' "
                    "mode classes", rule="model_executor/models/registry.py::_PREVIOUSLY_SUPPORTED_MODELS"),
        Change(what="the capacity is logged from get_kv_cache_capacity: int(max concurrency x max_model_len), as "
                    "before", rule=f"{_UTILS}::get_kv_cache_capacity"),
        Change(what="the `vllm serve` parser: 268 flags (--device-ids, --watermark, ...)", rule=_PARSER),
    ))

V0_25_0 = replace(V0_24_0, version="0.25.0", changes=(
    Change(what="FLASH_ATTN's kernel blocks are MultipleOf(16) for every hybrid (before: 16, 32, 64 under a float32 "
                "state; the same smallest block, so the same hybrid block)",
           rule="v1/attention/backends/flash_attn.py::FlashAttentionBackend.get_supported_kernel_block_sizes"),
    Change(what="the `vllm serve` parser: 272 flags; --kv-cache-dtype gains new choices", rule=_PARSER),
))

V0_25_1 = _patch(V0_25_0, "0.25.1", "only a MoE layer fix, the all-reduce RMS norm fusion and video decoding",
                 "model_executor/layers/fused_moe/layer.py::FusedMoE")

V0_26_0 = replace(V0_25_1, version="0.26.0", changes=(
    Change(what="generative hybrids report prefix caching as supported, but EngineArgs keeps it opt-in for them "
                "(default_prefix_caching = supported and not is_hybrid): still off by default",
           rule="config/model.py::ModelConfig.is_prefix_caching_supported, "
                "engine/arg_utils.py::EngineArgs._set_default_chunked_prefill_and_prefix_caching_args"),
    Change(what="the `vllm serve` parser: 276 flags (--max-num-scheduled-tokens, --prefix-match-unit, ...)",
           rule=_PARSER),
))

V0_27_0 = replace(V0_26_0, version="0.27.0", mla_hybrid_block_alignment=128, changes=(
    Change(what="MLA hybrids (Kimi-Linear): the attention block is a multiple of 128 (the TRTLLM / FlashInfer MLA "
                "decode kernels)", rule="platforms/interface.py::Platform._align_hybrid_block_size"),
    Change(what="Kimi-Linear's class moves to models/kimi_k3/nvidia/model.py; the KDA conv state keeps the "
                "speculative tokens (Kimi-Linear has no MTP drafter: not reached)",
           rule="model_executor/layers/mamba/mamba_utils.py::MambaStateShapeCalculator.kda_state_shape"),
    Change(what="the `vllm serve` parser: 284 flags; --max-num-partial-prefills and --max-long-partial-prefills "
                "removed", rule=_PARSER),
))

V0_27_1 = _patch(V0_27_0, "0.27.1", "only the Qwen3 DSpark model", "model_executor/models/qwen3_dspark.py::"
                 "Qwen3DSparkForCausalLM")

V0_28_0 = replace(V0_27_1, version="0.28.0", hybrid_prefix_caching=True, all_mode_default=False,
                  large_card_batch_tier=True, changes=(
    Change(what="prefix caching is on by default for generative hybrid models (the opt-in exception is gone): the "
                "state runs 'align' unless prefix caching is turned off",
           rule="engine/arg_utils.py::EngineArgs._set_default_chunked_prefill_and_prefix_caching_args"),
    Change(what="under prefix caching the state runs 'align' unless `--mamba-cache-mode all` asks for 'all' (a "
                "SupportsMambaPrefixCaching class keeps it, any other falls back to 'align')",
           rule="model_executor/models/config.py::MambaModelConfig.verify_and_update_config"),
    Change(what="batch defaults gain the >= 160 GiB tier (1024 / 16384)",
           rule="engine/arg_utils.py::EngineArgs.get_batch_defaults"),
    Change(what="the capacity is no longer logged inside get_kv_cache_configs (same numbers, logged by the engine "
                "core)", rule=f"{_UTILS}::get_kv_cache_configs"),
    Change(what="the `vllm serve` parser: 286 flags (--calculate-kv-scales, --override-attention-dtype removed)",
           rule=_PARSER),
))

V0_29_0 = replace(V0_28_0, version="0.29.0", checks_hold_null_block=True, changes=(
    Change(what="the admission check and the max_model_len auto-fit hold the null block back first (a refusal names "
                "one block less)", rule=f"{_UTILS}::get_kv_cache_configs"),
    Change(what="the `vllm serve` parser moves to entrypoints/launchers/cli_args.py: 294 flags",
           rule="entrypoints/launchers/cli_args.py::make_arg_parser"),
))

V0_30_0 = replace(V0_29_0, version="0.30.0", kda_ssm_cache_dtype_flag=True, changes=(
    Change(what="Kimi-Linear's model class reads --mamba-ssm-cache-dtype for the KDA recurrent state it sizes the "
                "block from (its KDA layers keep float32)",
           rule="model_executor/layers/mamba/mamba_utils.py::MambaStateDtypeCalculator.kda_state_dtype"),
    Change(what="the `vllm serve` parser: 302 flags (--enable-mamba-fine-grained-prefix-cache, ...)", rule=_PARSER),
))

V0_31_0 = replace(V0_30_0, version="0.31.0", changes=(
    Change(what="the `vllm serve` parser: 313 flags; --device-memory-utilization spells --gpu-memory-utilization",
           rule=_PARSER),
))

V0_32_0 = replace(V0_31_0, version="0.32.0", mamba_prefix_caching_archs=(), mamba2_prefill_checkpoints=True, changes=(
    Change(what="'all' mode is gone: --mamba-cache-mode takes align or none, and prefix caching runs 'align' for "
                "every class", rule="model_executor/models/config.py::MambaModelConfig.verify_and_update_config, "
                                    "v1/kv_cache_interface.py::MambaSpec.max_memory_usage_bytes"),
    Change(what="MambaMixer2 layers keep a prefill checkpoint page in align mode (3 + speculative pages a request; "
                "alignment 1, so the block is unchanged)",
           rule="model_executor/layers/mamba/mamba_mixer2.py::MambaMixer2.get_kv_cache_spec"),
    Change(what="the `vllm serve` parser: 318 flags", rule=_PARSER),
))

V0_33_0 = replace(
    V0_32_0, version="0.33.0", mamba_cache_mode_flag=False, gdn_prefill_checkpoints=True,
    planning_module="v1/core/kv_cache_planning.py", changes=(
        Change(what="--mamba-cache-mode is deprecated and has no effect: prefix caching decides the mode",
               rule="engine/arg_utils.py::EngineArgs.create_engine_config"),
        Change(what="FlashInfer's GDN prefill keeps a prefill checkpoint page and the hybrid block is a multiple of "
                    "its 64-token checkpoint grid",
               rule="model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py::"
                    "QwenGatedDeltaNetAttention.get_kv_cache_spec, "
                    "platforms/interface.py::Platform._align_hybrid_block_size"),
        Change(what="GB10 (sm121) reads its memory through the CUDA fallback when NVML has none, and "
                    "get_batch_defaults keeps it on the small tier by name (before, NVML's query raised there and "
                    "get_batch_defaults fell back to the small tier: the same 256 / 2048)",
               rule="platforms/cuda.py::NvmlCudaPlatform.get_device_total_memory, "
                    "engine/arg_utils.py::EngineArgs.get_batch_defaults"),
        Change(what="the KV cache planning moves out of kv_cache_utils.py",
               rule="v1/core/kv_cache_planning.py::get_kv_cache_configs"),
        Change(what="the `vllm serve` parser moves to entrypoints/common/cli_args.py: 322 flags; "
                    "--disable-prefix-caching (EnableDisableAction) instead of --no-enable-prefix-caching",
               rule="entrypoints/common/cli_args.py::make_arg_parser"),
    ))

V0_34_0 = replace(V0_33_0, version="0.34.0", refusal_wording="0.34", extensible_kv_cache=True, default_block_size=64,
                  changes=(
    Change(what="the default block size is 64 (was 16): the attention backend's preferred size when it supports 64, so "
                "a hybrid's block is a multiple of 64 unless --block-size says otherwise",
           rule="config/cache.py::CacheConfig.DEFAULT_BLOCK_SIZE, platforms/interface.py::"
                "Platform.update_block_size_for_backend"),
    Change(what="the extensible KV cache is on by default on CUDA: --gpu-memory-utilization defaults to 1.0 and the "
                "cache is sized from the memory measured after CUDA graph capture and warmup (auto-fit runs again "
                "then); off under --kv-cache-memory-bytes, --num-gpu-blocks-override or "
                "--disable-extensible-kv-cache",
           rule="config/vllm.py::VllmConfig._resolve_extensible_kv_cache, "
                "config/cache.py::CacheConfig.resolved_gpu_memory_utilization"),
    Change(what="the memory refusals end with a hint that follows the extensible KV cache and the utilization",
           rule="v1/core/kv_cache_planning.py::_more_kv_cache_memory_hint"),
    Change(what="a state's bytes are aligned to 16 under FlashInfer ReplaySSM (--use-replayssm; 1 otherwise)",
           rule="model_executor/layers/mamba/mamba_utils.py::mamba_state_alignment"),
    Change(what="the `vllm serve` parser: 329 flags (--enable-extensible-kv-cache, ...)", rule=_PARSER),
))

RELEASES = {r.version: r for r in (V0_20_0, V0_20_1, V0_20_2, V0_21_0, V0_22_0, V0_22_1, V0_23_0, V0_24_0, V0_25_0,
                                   V0_25_1, V0_26_0, V0_27_0, V0_27_1, V0_28_0, V0_29_0, V0_30_0, V0_31_0, V0_32_0,
                                   V0_33_0, V0_34_0)}
NEWEST = V0_34_0
