"""What changes between the modelled vLLM releases: each release's switches, every change cited to the file and
function it mirrors (checked against that release's own code by tests/conformance/test_vllm_conformance.py).

The newest release (0.33.0) is the reference; an older release lists what it does differently."""

from __future__ import annotations

from dataclasses import dataclass, replace


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
    # architectures whose model class implements SupportsMambaPrefixCaching ('all' mode by default under caching)
    mamba_prefix_caching_archs: tuple[str, ...]
    prefill_checkpoints: bool  # GDN (FlashInfer) / Mamba2 layers keep a prefill checkpoint page in align mode
    large_card_batch_tier: bool  # get_batch_defaults has the >= 160 GiB tier and keeps GB10 on the small one
    checks_hold_null_block: bool  # the admission check and auto-fit leave the null block out of the memory
    # the logged `GPU KV cache size` is num_blocks // groups x the smallest block size (0.20.0), not
    # int(max concurrency x max_model_len)
    tokens_from_blocks: bool = False
    # the memory refusals name the CPU backend and spell "the model's max seq len" (0.20.x: "the models's")
    cpu_backend_wording: bool = True
    changes: tuple[Change, ...] = ()
    # MLA hybrids: the attention block is a multiple of this (0.33.0: 128 for the TRTLLM/FlashInfer MLA decode
    # kernels; 1: none)
    mla_hybrid_block_alignment: int = 128
    kda_ssm_cache_dtype_flag: bool = True  # Kimi-Linear's model class reads --mamba-ssm-cache-dtype for the state page
    # KDA state as one fused q/k/v conv state and the recurrent state (0.20.x keeps three conv states apart: not
    # modelled, Kimi-Linear is refused there)
    kda_fused_conv_state: bool = True
    # where the KV cache planning lives (0.33.0 split it out of kv_cache_utils.py) and the function that logs the
    # capacity: the provenance explain and logs check name
    planning_module: str = "v1/core/kv_cache_planning.py"
    capacity_rule: str = "v1/core/kv_cache_utils.py::get_kv_cache_capacity"


# 'all' mode (0.24.0 and older, the Mamba prefix-caching classes): a state page for every block of a request, the
# block rounded to the state kernels' chunk
_ALL_MODE = Change(what="'all' mode keeps a state page for every mamba block of a request (cdiv(max_model_len, "
                        "block) a state group) and sizes the block from lcm(the model's mamba chunk or "
                        "--mamba-block-size, the kernel block), the mamba block with it",
                   rule="v1/kv_cache_interface.py::MambaSpec.max_memory_usage_bytes, "
                        "platforms/interface.py::Platform._align_hybrid_block_size")

NEWEST = Release(version="0.33.0", hybrid_prefix_caching=True, mamba_cache_mode_flag=False,
                 mamba_prefix_caching_archs=(), prefill_checkpoints=True, large_card_batch_tier=True,
                 checks_hold_null_block=True)

V0_24_0 = Release(
    version="0.24.0", hybrid_prefix_caching=False, mamba_cache_mode_flag=True,
    mamba_prefix_caching_archs=("FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM", "JambaForCausalLM",
                                "MambaForCausalLM", "Mamba2ForCausalLM", "NemotronHForCausalLM",
                                "NemotronHPuzzleForCausalLM", "Zamba2ForCausalLM"),
    prefill_checkpoints=False, large_card_batch_tier=False, checks_hold_null_block=False,
    changes=(
        Change(what="prefix caching is off by default for generative hybrid models (state runs in 'none' mode "
                    "unless --enable-prefix-caching)",
               rule="config/model.py::ModelConfig.is_prefix_caching_supported"),
        Change(what="--mamba-cache-mode is honoured; under prefix caching 'none' becomes 'all' for a model class "
                    "with SupportsMambaPrefixCaching (Falcon-H1, Granite-4.0-H, Jamba, Mamba, Mamba2, Nemotron-H, "
                    "Zamba2) and 'align' otherwise (the GDN hybrids)",
               rule="model_executor/models/config.py::MambaModelConfig.verify_and_update_config"),
        Change(what="no prefill checkpoint page: align mode keeps 2 + speculative state pages per request, and the "
                    "hybrid block is not aligned to FlashInfer's 64-token GDN checkpoint grid",
               rule="v1/kv_cache_interface.py::MambaSpec.max_memory_usage_bytes, "
                    "platforms/interface.py::Platform._align_hybrid_block_size"),
        Change(what="batch defaults have two tiers: >= 70 GiB and not an A100 (1024 / 8192), else 256 / 2048 "
                    "(no >= 160 GiB tier, GB10 on the large one)",
               rule="engine/arg_utils.py::EngineArgs.get_batch_defaults"),
        Change(what="the admission check and the max_model_len auto-fit use the whole available memory (0.33.0 "
                    "holds the null block back first), so a refusal names 0.05 GiB more",
               rule="v1/core/kv_cache_utils.py::get_kv_cache_configs"),
        Change(what="the `vllm serve` parser: --no-enable-prefix-caching (BooleanOptionalAction) instead of "
                    "--disable-prefix-caching, 268 flags (flags-0.24.0.json)",
               rule="entrypoints/openai/cli_args.py::make_arg_parser"),
        Change(what="MLA hybrids (Kimi-Linear): the attention block is not raised to a multiple of 128, only of the "
                    "MLA backend's smallest kernel block (or its preferred block size)",
               rule="platforms/interface.py::Platform._align_hybrid_block_size"),
        Change(what="Kimi-Linear's model class ignores --mamba-ssm-cache-dtype: the KDA recurrent state is float32",
               rule="model_executor/models/kimi_linear.py::KimiLinearForCausalLM.get_mamba_state_dtype_from_config"),
        _ALL_MODE,
    ), mla_hybrid_block_alignment=1, kda_ssm_cache_dtype_flag=False, planning_module="v1/core/kv_cache_utils.py")

_NO_CHECKPOINTS, _BATCH_TIERS, _WHOLE_MEMORY = V0_24_0.changes[2:5]  # as 0.24.0 (same code in 0.20.x)

V0_20_1 = replace(
    V0_24_0, version="0.20.1",
    mamba_prefix_caching_archs=tuple(sorted(V0_24_0.mamba_prefix_caching_archs + ("BambaForCausalLM",))),
    cpu_backend_wording=False, kda_fused_conv_state=False,
    capacity_rule="v1/core/kv_cache_utils.py::_report_kv_cache_config",
    changes=(
        V0_24_0.changes[0],
        Change(what="--mamba-cache-mode is honoured; under prefix caching 'none' becomes 'all' for a model class "
                    "with SupportsMambaPrefixCaching (0.24.0's list and Bamba) and 'align' otherwise (the GDN "
                    "hybrids), and 'align' for every class under speculative decoding (not reached here: MTP is "
                    "modelled on the GDN hybrids only)",
               rule="model_executor/models/config.py::MambaModelConfig.verify_and_update_config"),
        _NO_CHECKPOINTS, _BATCH_TIERS, _WHOLE_MEMORY,
        Change(what="the memory refusals read \"the models's max seq len\" and do not name the CPU backend",
               rule="v1/core/kv_cache_utils.py::_check_enough_kv_cache_memory"),
        Change(what="the logged capacity comes from _report_kv_cache_config (no get_kv_cache_capacity): "
                    "int(max concurrency x max_model_len), as 0.24.0 logs it",
               rule="v1/core/kv_cache_utils.py::_report_kv_cache_config"),
        Change(what="the `vllm serve` parser: 241 flags (flags-0.20.1.json); --mamba-cache-dtype and "
                    "--mamba-ssm-cache-dtype take auto / float16 / float32 (no bfloat16)",
               rule="engine/arg_utils.py::EngineArgs.add_cli_args, config/cache.py::CacheConfig"),
        Change(what="the KDA state is four tensors (q, k and v conv states apart, then the recurrent state): "
                    "not modelled, so Kimi-Linear is refused on 0.20.x",
               rule="model_executor/layers/mamba/mamba_utils.py::MambaStateShapeCalculator.kda_state_shape"),
        _ALL_MODE,
    ))

V0_20_0 = replace(
    V0_20_1, version="0.20.0", tokens_from_blocks=True,
    changes=(*V0_20_1.changes[:6], V0_20_1.changes[8], _ALL_MODE,
             Change(what="the logged `GPU KV cache size` is num_blocks // KV cache groups x the smallest group "
                         "block size (the concurrency line is as 0.20.1's)",
                    rule="v1/core/kv_cache_utils.py::_report_kv_cache_config"),
             Change(what="the `vllm serve` parser: as 0.20.1's (flags-0.20.0.json)",
                    rule="engine/arg_utils.py::EngineArgs.add_cli_args")))

RELEASES = {r.version: r for r in (V0_20_0, V0_20_1, V0_24_0, NEWEST)}
