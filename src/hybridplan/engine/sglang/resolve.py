"""Argument resolution (sglang 0.5.23's, a release's switches applied), in the engine's order (arg_groups/pipeline.py::run_resolution_pipeline).

Only the rules that change what the pools size are modelled; each step names the engine function it mirrors.
"""

from __future__ import annotations

from hybridplan.engine.sglang.args import EngineArgs, Platform, env_bool, freeze
from hybridplan.engine.sglang.behaviours import Switches
from hybridplan.engine.sglang.command import LaunchCommand
from hybridplan.engine.sglang import archs
from hybridplan.engine.sglang.attention import resolve_attention_backend
from hybridplan.engine.sglang.kv_dtype import target_kv_dtype
from hybridplan.engine.sglang.memory_defaults import apply_memory_defaults
from hybridplan.engine.sglang.resolver import Resolver
from hybridplan.engine.sglang.speculative import resolve_speculative
from hybridplan.errors import BadInput
from hybridplan.models.geometry import DraftGeometry, ModelGeometry
from hybridplan.provenance import Source

# Flags whose memory effect hybridplan reports but does not model; explain warns when they are set.
UNMODELLED = {
    "enable_unified_memory": "the unified memory arena floats the state/KV split at run time",
    "enable_kv_cache_sharding": "the page-shard scratch is subtracted before T is computed",
    "enable_hierarchical_cache": "host-memory tiers do not change the GPU pools but may reject some modes",
    "enable_page_major_kv_layout": "the page-major envelope layout is priced like the separate pools",
}
PARSE_RULE = "server_args.py::prepare_server_args (argparse)"


def _parallel(r: Resolver) -> None:
    """parallel_hook.py::_handle_deprecated_dp_attention and runtime_context.py::derive_attn_tp_size."""
    if r["enable_dp_attention"]:
        if r["attn_dp_size"] == 1:
            r.set("parallel_hook.py::_handle_deprecated_dp_attention", attn_dp_size=r["dp_size"], dp_size=1)
        r.set("parallel_hook.py::_handle_deprecated_dp_attention", enable_dp_attention=False)
    tp, dp, cp = r["tp_size"], r["attn_dp_size"], r["attn_cp_size"]
    for name in ("tp_size", "pp_size", "attn_dp_size", "attn_cp_size", "dcp_size", "dp_size"):
        if r[name] < 1:
            raise BadInput(f"--{name.replace('_', '-')} must be >= 1, got {r[name]}")
    if tp % (dp * cp) != 0:
        raise r.refuse(f"tp_size ({tp}) must be divisible by attn_dp_size ({dp}) * attn_cp_size ({cp})",
                       "runtime_context.py::derive_attn_tp_size", "AssertionError")
    r.set("runtime_context.py::derive_attn_tp_size", attn_tp_size=tp // dp // cp)


# transformers' config class of each pure-SSM model_type (none declares num_attention_heads)
PURE_SSM_CONFIG_CLASSES = {"mamba": "MambaConfig", "mamba2": "Mamba2Config", "falcon_mamba": "FalconMambaConfig"}


def _model(r: Resolver) -> None:
    """configs/model_config.py: context length, model dtype, multimodality."""
    from hybridplan.dtypes import model_dtype

    if r["context_length"] is None:
        r.set("utils/hf_transformers/common.py::get_context_length", context_length=r.geo.context_length)
    elif r["context_length"] > r.geo.context_length and not (
            env_bool(r.env, "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN") or env_bool(r.env, "SGLANG_IS_IN_CI")):
        # configs/model_config.py::ModelConfig._derive_context_length
        raise r.refuse(
            f"Warning: User-specified context_length ({r['context_length']}) is greater than the derived "
            f"context_length ({r.geo.context_length}). This may lead to incorrect model outputs or CUDA errors. Note "
            "that the derived context_length may differ from max_position_embeddings in the model's config. To allow "
            "overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
            "configs/model_config.py::ModelConfig._derive_context_length")
    if not r.geo.full_attention_layer_ids and not r.sw.mambaish_pure_mamba:
        # before 0.5.20 configs/model_config.py::ModelConfig._derive_model_shapes (after the context length) reads
        # num_attention_heads, which a pure SSM config lacks (0.5.20: head_dim 0, hybrid_arch.py::mamba2_config)
        cls = PURE_SSM_CONFIG_CLASSES.get(r.geo.model_type, "PretrainedConfig")
        raise r.refuse(f"'{cls}' object has no attribute 'num_attention_heads'",
                       "configs/model_config.py::ModelConfig._derive_model_shapes", "AttributeError")
    r.set("configs/model_config.py::_get_and_verify_dtype",
          model_dtype=model_dtype(r.geo.config_dtype, r["dtype"], r.geo.model_type))
    mm = r.geo.is_multimodal and not r["language_model_only"]
    if r["enable_multimodal"] is False:
        mm = False
    r.set("configs/model_config.py::ModelConfig.is_multimodal", is_multimodal=mm)


def _pd_disaggregation(r: Resolver) -> None:
    """arg_groups/pd_disaggregation_hook.py::handle_pd_disaggregation (before the memory defaults): a decode server
    keeps no radix cache unless --disaggregation-decode-enable-radix-cache asks for it (so one state slot a request),
    and reserves extra req_to_token slots for in-transfer requests, 2x a small per-worker batch cap (none without an
    explicit --max-running-requests or above 32 a worker). Every modelled release does both; the per-worker divisor is
    the number of DP ranks (0.5.18-0.5.21: --dp; 0.5.22 on: replicas x attention-DP groups, the same product)."""
    rule = "arg_groups/pd_disaggregation_hook.py::handle_pd_disaggregation"
    fake = r["disaggregation_transfer_backend"] == "fake"
    if r["disaggregation_mode"] == "prefill" and fake:
        raise r.refuse("Prefill server does not support 'fake' as the transfer backend", rule, "AssertionError")
    if r["disaggregation_mode"] != "decode":
        return
    if r["disaggregation_decode_enable_radix_cache"] and fake:
        raise r.refuse("--disaggregation-decode-enable-radix-cache is incompatible with "
                       "--disaggregation-transfer-backend fake", rule)
    r.set(rule, disable_radix_cache=not r["disaggregation_decode_enable_radix_cache"])
    if r["disaggregation_decode_extra_slots"] is None:
        mrr, extra = r["max_running_requests"], 0
        if mrr is not None:
            per_worker = max(1, mrr // max(1, r["dp_size"] * r["attn_dp_size"]))
            extra = per_worker * 2 if per_worker <= 32 else 0
        r.set(rule, disaggregation_decode_extra_slots=extra)
    if r["disaggregation_decode_extra_slots"]:
        r.notes.append(f"PD decode: {r['disaggregation_decode_extra_slots']} extra request slots per worker for "
                       "requests in transfer; the state pool is raised to (requests + extra) x S slots where "
                       "max_mamba_cache_size is smaller (disaggregation/decode.py::HybridMambaDecodeReqToTokenPool), "
                       "memory the pool budget does not hold: not modelled")


def _memory(r: Resolver) -> None:
    """arg_groups/memory_hook.py::handle_gpu_memory_settings (chunked prefill, decode graph, mem fraction)."""
    apply_memory_defaults(r)


# arg_groups/model_overrides/nemotron_h.py::_nemotron_h_overrides is registered for these; hf_config class by model_type
NEMOTRON_H_OVERRIDE_ARCHS = ("NemotronHForCausalLM", "NemotronHPuzzleForCausalLM", "NemotronH_Omni_Reasoning_V3")
NEMOTRON_H_CONFIG_CLASSES = {"nemotron_h": "NemotronHConfig", "nemotron_h_puzzle": "NemotronHPuzzleConfig"}


def _model_overrides(r: Resolver) -> None:
    """model_hook.py::handle_model_specific_adjustments -> nemotron_h.py::_nemotron_h_overrides.

    A ModelOpt checkpoint whose quantization resolves to modelopt (generic) or modelopt_mixed is re-read from
    hf_config.quantization_config; a checkpoint that declares it only in hf_quant_config.json has no such attribute,
    so the engine crashes for any launch. Runs before the mamba radix validation, which these archs reach later.
    """
    geo = r.geo
    if (geo.architecture in NEMOTRON_H_OVERRIDE_ARCHS and geo.quantization in ("modelopt", "modelopt_mixed")
            and not geo.has_quantization_config):
        cls = NEMOTRON_H_CONFIG_CLASSES.get(geo.model_type, "NemotronHConfig")
        raise r.refuse(f"'{cls}' object has no attribute 'quantization_config'",
                       "arg_groups/model_overrides/nemotron_h.py::_nemotron_h_overrides", "AttributeError")


def _data_parallel(r: Resolver) -> None:
    """parallel_hook.py::handle_data_parallelism: under attention DP each rank prefills chunked_prefill_size // dp."""
    if r["attn_dp_size"] > 1 and r["chunked_prefill_size"] is not None:
        r.set("parallel_hook.py::handle_data_parallelism",
              chunked_prefill_size=r["chunked_prefill_size"] // r["attn_dp_size"])


def _radix(r: Resolver) -> None:
    """overrides.py::_mamba_radix_cache_resolution, then model_hook.py::handle_mamba_radix_cache validation."""
    geo = r.geo
    device = r.platform.device
    uses = archs.uses_mamba_radix_cache(geo.architecture, bool(geo.linear_layer_ids), r.sw)
    strategy = r["mamba_radix_cache_strategy"]
    extra = strategy in ("extra_buffer", "extra_buffer_lazy")
    rule = "overrides.py::_mamba_radix_cache_resolution"
    if not uses or r["disable_radix_cache"]:
        if not uses and extra and r.sw.extra_buffer_on_stateless_arch_refused:
            raise r.refuse(f"--mamba-radix-cache-strategy {strategy} needs mamba state, got {geo.architecture}.",
                           "arg_groups/model_hook.py::handle_mamba_radix_cache")
        r.set(rule, uses_mamba_radix_cache=False)
        return
    r.set(rule, uses_mamba_radix_cache=True)
    if strategy == "auto":
        wants_overlap = not r["disable_overlap_schedule"]
        wants_paging = r["page_size"] is not None and r["page_size"] > 1
        if (wants_overlap or wants_paging) and archs.supports_extra_buffer(geo.architecture, r["linear_attn_backend"], device, r.sw):
            r.set(rule, mamba_radix_cache_strategy="extra_buffer")
        else:
            r.set(rule, mamba_radix_cache_strategy="no_buffer", disable_overlap_schedule=True)


def _validate_radix(r: Resolver) -> None:
    """arg_groups/mamba_hook.py::validate_mamba_extra_buffer / validate_mamba_no_buffer.

    Runs before the page-size default and the speculative defaults, so only a typed --page-size or
    --speculative-num-draft-tokens is checked here (as in the engine).
    """
    if not r["uses_mamba_radix_cache"]:
        return
    strategy = r["mamba_radix_cache_strategy"]
    rule = "arg_groups/mamba_hook.py::validate_mamba_" + ("extra_buffer" if strategy.startswith("extra") else "no_buffer")
    if strategy in ("extra_buffer", "extra_buffer_lazy"):
        if not archs.supports_extra_buffer(r.geo.architecture, r["linear_attn_backend"], r.platform.device, r.sw):
            raise r.refuse(f"extra_buffer is not supported for {r.geo.architecture}; use no_buffer.", rule, "AssertionError")
        if strategy == "extra_buffer_lazy" and r["disaggregation_mode"] != "null":
            raise r.refuse("extra_buffer_lazy unsupported under PD disaggregation; use "
                           "--mamba-radix-cache-strategy extra_buffer.", rule, "AssertionError")
        if r["speculative_num_draft_tokens"] is not None and r["mamba_track_interval"] < r["speculative_num_draft_tokens"]:
            raise r.refuse("assert mamba_track_interval >= speculative_num_draft_tokens", rule, "AssertionError")
        page = r["page_size"]
        if page is None:
            return
        if r["mamba_track_interval"] % page != 0:
            raise r.refuse("assert mamba_track_interval % page_size == 0", rule, "AssertionError")
        chunk = r.geo.mamba_chunk_size or 64
        if max(chunk, page) % min(chunk, page) != 0:
            raise r.refuse("For SSM models, either chunk_size or page_size must be divisible by the other, "
                           f"got chunk_size={chunk}, page_size={page}", "overrides.py::mamba_cache_chunk_size",
                           "AssertionError")
    else:
        if r["page_size"] not in (1, None):
            raise r.refuse("no_buffer only supports page_size=1.", rule, "AssertionError")
        if not r["disable_overlap_schedule"]:
            raise r.refuse("no_buffer do not support overlap schedule. Try to set disable_overlap_schedule=True.",
                           rule, "AssertionError")
        if r["attention_backend"] == "trtllm_mha":
            raise r.refuse("no_buffer do not support trtllm_mha attention backend.", rule, "AssertionError")


def _attention(r: Resolver) -> None:
    """arg_groups/attention_hook.py::handle_attention_backend_compatibility (the backend and the aiter fraction)."""
    resolve_attention_backend(r)


def _page_size(r: Resolver) -> None:
    """overrides.py::_page_size_default: 1 on CUDA/HIP (64 on MUSA, and on HIP with the vectorized_5d aiter layout)."""
    if r["page_size"] is None:
        rule = "overrides.py::_page_size_default"
        if r.platform.device == "hip" and (r.env_str("SGLANG_AITER_KV_CACHE_LAYOUT", "nhd") or "").lower() == "vectorized_5d":
            r.set_default(f"{rule} (SGLANG_AITER_KV_CACHE_LAYOUT=vectorized_5d)", page_size=64)
        else:
            r.set_default(rule, page_size=64 if r.platform.device == "musa" else 1)
    elif r["page_size"] < 1:
        raise BadInput(f"--page-size must be >= 1, got {r['page_size']}")


def _pp_overlap(r: Resolver) -> None:
    """overrides.py::_pipeline_parallel_overlap_disable (runs after the radix strategy is chosen)."""
    if r["pp_size"] > 1 and not r["disable_overlap_schedule"]:
        r.set("overrides.py::_pipeline_parallel_overlap_disable", disable_overlap_schedule=True)
        r.notes.append("Pipeline parallelism is incompatible with overlap schedule.")


def _spec(r: Resolver) -> None:
    """arg_groups/speculative_hook.py::handle_speculative_decoding and the per-algorithm handlers."""
    resolve_speculative(r)


def _linear_attn(r: Resolver) -> None:
    """arg_groups/attention_hook.py::handle_linear_attn_backend (ReplaySSM rules) and the SSM dtype export."""
    decode = r["linear_attn_decode_backend"] or r["linear_attn_backend"]
    if r["enable_linear_replayssm"]:
        if decode not in ("triton", "helion"):
            raise r.refuse("--enable-linear-replayssm requires Triton, or Helion for KDA, as the linear-attn decode "
                           f"backend; got --linear-attn-decode-backend={decode!r}.", "attention_hook.py::handle_linear_attn_backend")
        if r.get_bool("uses_mamba_radix_cache") and r["mamba_radix_cache_strategy"] in ("extra_buffer", "extra_buffer_lazy"):
            raise r.refuse("--enable-linear-replayssm requires --mamba-radix-cache-strategy no_buffer (the default); "
                           "the extra_buffer ping-pong donation path is not yet supported (follow-up). Got "
                           f"--mamba-radix-cache-strategy={r['mamba_radix_cache_strategy']!r}.",
                           "attention_hook.py::handle_linear_attn_backend")
        if r["disaggregation_mode"] != "null":
            raise r.refuse("--enable-linear-replayssm is not supported under PD disaggregation yet (follow-up). Got "
                           f"--disaggregation-mode={r['disaggregation_mode']!r}.", "attention_hook.py::handle_linear_attn_backend")
        if r["linear_replayssm_cache_len"] < 1:
            raise r.refuse(f"--linear-replayssm-cache-len must be >= 1, got {r['linear_replayssm_cache_len']}.",
                           "attention_hook.py::handle_linear_attn_backend")
    if r["enable_linear_replayssm_spec"]:
        rule = "attention_hook.py::handle_linear_attn_backend"
        topk = r["speculative_eagle_topk"]
        if topk not in (None, 1):
            raise r.refuse("--enable-linear-replayssm-spec requires a linear draft chain (--speculative-eagle-topk in "
                           "{None, 1}); the chunked verify kernel uses a strictly-lower causal mask and is invalid for "
                           f"EAGLE tree verify. Got --speculative-eagle-topk={topk!r}.", rule)
        if decode not in ("triton", "flashinfer"):
            raise r.refuse("--enable-linear-replayssm-spec requires the triton or flashinfer linear-attn decode backend, "
                           f"got --linear-attn-decode-backend={decode!r}.", rule)
        ragged = r.env_str("SGLANG_RAGGED_VERIFY_MODE", "static")
        verify = r["linear_attn_verify_backend"]
        algo = (r["speculative_algorithm"] or "").upper()
        if ragged != "static" and (algo not in ("DSPARK", "DFLASH") or verify not in ("triton", "nv_cutedsl")):
            raise r.refuse("--enable-linear-replayssm-spec with "
                           f"SGLANG_RAGGED_VERIFY_MODE={ragged} requires the KDA fold-every-commit family (DSPARK/DFLASH) "
                           "and a ring-writing verify kernel (--linear-attn-verify-backend triton or nv_cutedsl); got "
                           f"algorithm={r['speculative_algorithm']!r}, verify={verify!r}. Use SGLANG_RAGGED_VERIFY_MODE=static.", rule)
        if r["disaggregation_mode"] == "prefill":
            raise r.refuse("--enable-linear-replayssm-spec is not supported on a PD prefill server: the ring is "
                           "spec-verify-only scratch and the prefill server never runs spec verify.", rule)
        if r["enable_linear_replayssm"]:
            raise r.refuse("--enable-linear-replayssm-spec and --enable-linear-replayssm are mutually exclusive: they "
                           "share the ring storage but drive it with incompatible cursor protocols (per-decode-forward vs "
                           "per-verify-commit advance).", rule)
        if r["mamba_ssm_dtype"] is None:
            r.set(rule, mamba_ssm_dtype="float32")


def _state_dtypes(r: Resolver) -> None:
    """configs/mamba_utils.py::mamba2_state_dtype, with the flag exported to the env (serving_hook.py)."""
    from hybridplan.dtypes import STATE_DTYPES

    conv_env = r.env_str("SGLANG_MAMBA_CONV_DTYPE", "bfloat16")
    conv = conv_env if conv_env in STATE_DTYPES else "bfloat16"
    r.set("configs/mamba_utils.py::mamba2_state_dtype (SGLANG_MAMBA_CONV_DTYPE)", mamba_conv_dtype=conv)
    flag = r["mamba_ssm_dtype"]
    env = r.env_str("SGLANG_MAMBA_SSM_DTYPE", None)
    cfg = r.geo.config_ssm_dtype
    if flag is not None:
        ssm, how = flag, "--mamba-ssm-dtype (exported to SGLANG_MAMBA_SSM_DTYPE)"
    elif env is not None and env in STATE_DTYPES:
        ssm, how = env, "env SGLANG_MAMBA_SSM_DTYPE"
    elif cfg is not None and cfg in STATE_DTYPES:
        ssm, how = cfg, "config.json mamba_ssm_dtype"
    else:
        ssm, how = "float32", "engine default float32"
        if env is not None:
            r.notes.append(f"Invalid mamba_ssm_dtype '{env}' from environment variable; using float32")
        elif cfg is not None:
            r.notes.append(f"Invalid mamba_ssm_dtype '{cfg}' in config; using float32")
    r.set(f"configs/mamba_utils.py::mamba2_state_dtype ({how})", mamba_ssm_dtype_resolved=ssm)


def _kv_dtype(r: Resolver) -> None:
    """mem_cache/kv_cache_dtype.py::configure_kv_cache_dtype for the target."""
    dtype, why = target_kv_dtype(r["kv_cache_dtype"], r.geo.kv_cache_quant_algo, r["model_dtype"], r.platform.device)
    r.set(f"mem_cache/kv_cache_dtype.py::configure_kv_cache_dtype ({why})", kv_cache_torch_dtype=dtype)
    r.set("runtime_context.py::get_platform().is_sm100", platform_sm100=r.platform.is_sm100)
    if dtype == "float4_e2m1fn_x2" and r["attention_backend"] is None and r["prefill_attention_backend"] is None:
        r.notes.append("FP4 KV: scale layouts depend on the attention backend; priced for flashinfer (set "
                       "--attention-backend to price another)")


def _fallbacks(r: Resolver) -> None:
    """arg_groups/arg_utils.py::fallbacks_of: resolvable fields still None take their declared fallback."""
    for dest, arg in list(r.args.items()):
        flags = r.reg.by_dest.get(dest)
        if arg.value is None and flags and flags[0].fallback is not None:
            r.set_default("arg_groups/arg_utils.py::fallbacks_of", **{dest: flags[0].fallback})


def _unmodelled(r: Resolver) -> None:
    for dest, why in UNMODELLED.items():
        if r.args.get(dest) is not None and r.args[dest].source is Source.EXPLICIT and r[dest]:
            r.notes.append(f"{r.reg.option_for(dest)} is set: not modelled ({why}); figures assume the separate pools")


def _model_layers(r: Resolver) -> None:
    """utils/common.py::make_layers (model construction, after the arguments): no more PP ranks than layers."""
    if r["pp_size"] > r.geo.num_hidden_layers:
        raise r.refuse("assert not pp_size or num_hidden_layers >= pp_size "
                       f"(pp_size={r['pp_size']}, num_hidden_layers={r.geo.num_hidden_layers})",
                       "utils/common.py::make_layers", "AssertionError")


STEPS = (_parallel, _model, _pd_disaggregation, _memory, _model_overrides, _data_parallel, _radix, _validate_radix, _attention,
         _page_size, _pp_overlap, _spec, _linear_attn, _state_dtypes, _kv_dtype, _fallbacks, _unmodelled, _model_layers)


def resolve(command: LaunchCommand, geo: ModelGeometry, sw: Switches, draft: DraftGeometry | None = None,
            platform: Platform | None = None) -> EngineArgs:
    """Resolve a launch command against a model as release `sw.version` does; refusals raise EngineRefusal."""
    r = Resolver(command, geo, draft, platform or Platform(), sw)
    for step in STEPS:
        step(r)
    return EngineArgs(version=sw.version, args=freeze(r.args), env=freeze(command.env_dict), notes=tuple(r.notes))

