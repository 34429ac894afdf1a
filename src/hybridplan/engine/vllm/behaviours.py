"""What changes between the modelled vLLM releases: each release's switches, every change cited to the file and
function it mirrors (checked against that release's own code by tests/conformance/test_vllm_conformance.py).

The newest release (0.33.0) is the reference; an older release lists what it does differently."""

from __future__ import annotations

from dataclasses import dataclass


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
    changes: tuple[Change, ...] = ()
    # MLA hybrids: the attention block is a multiple of this (0.33.0: 128 for the TRTLLM/FlashInfer MLA decode
    # kernels; 1: none)
    mla_hybrid_block_alignment: int = 128
    kda_ssm_cache_dtype_flag: bool = True  # Kimi-Linear's model class reads --mamba-ssm-cache-dtype for the state page


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
    ), mla_hybrid_block_alignment=1, kda_ssm_cache_dtype_flag=False)

RELEASES = {r.version: r for r in (V0_24_0, NEWEST)}
