"""How sglang 0.5.18 through 0.5.23 differ in the rules hybridplan models: named switches, each change cited.

One model serves every release; a release differs only by the values below. `CHANGES` is the history: every
entry sets one switch in one release and cites the engine file::function where the behaviour changed (0.5.18
entries are the baseline, cited where the rule lives in 0.5.18). `switches(v)` folds the history up to release v.
Architecture-list switches accumulate (an entry lists the architectures that join); the others are replaced.
Flags a release lacks or parses differently are data too: engine/sglang/flag_history.json (scripts/gen_flag_history.py);
--attn-dp-size (0.5.22) is only that: before it, --enable-dp-attention --dp N gives the same widths. Not switches
either: changes inside what hybridplan does not model (the fused draft entry of --enable-unified-memory, 0.5.23).
scripts/check_behaviours.py re-reads each cited change from the unpacked releases (maintainers; needs the wheels).

A build between releases is no release: it is a named profile (`PROFILES`), a release's switches and flag registry
with the overrides the build's own measurements show, each with its evidence. `switches(name)` folds the base
release and applies them; a profile never silently becomes the newest release. Conformance covers the releases only
(there is no oracle for a dev build).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Literal

from hybridplan.errors import BadInput

VERSIONS = ("0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23")

ReplaySSMRing = Literal["per_slot", "fixed"]
RingLayout = Literal["raw", "compact"]
RingLength = Literal["max_draft_tokens", "cache_len"]
MlaPrefillGraphMaxBs = Literal["fixed_2048", "chunk_capped_8192"]
KdaBreakable = Literal["kept", "disabled", "disabled_but_glm5_next"]


@dataclass(frozen=True, kw_only=True)
class Switches:
    """The behaviour of one release, as values of named switches."""

    version: str
    # arg_groups/overrides.py: architectures routed through the mamba radix cache / allowed extra_buffer
    mamba_radix_cache_archs: frozenset[str]
    mamba_extra_buffer_archs: frozenset[str]
    # configs/model_config.py::multimodal_breakable_cuda_graph_supported_model_archs: multimodal archs that keep the
    # default breakable prefill graph (the piecewise list of 0.5.18-0.5.21 routes no mamba-ish arch hybridplan loads)
    multimodal_breakable_graph_archs: frozenset[str]
    # arg_groups/memory_hook.py::handle_gpu_memory_settings, 20-35 GiB tier: (chunked prefill, decode max_bs for
    # tp < 4, for tp >= 4)
    mid_tier_chunk_and_graph: tuple[int, int, int]
    unknown_gpu_mem_fraction: float  # default --mem-fraction-static when the GPU memory is unknown
    xpu_extra_reserve_mib: int  # added to the reserve on XPU
    decode_graph_capped_by_mrr: bool  # a defaulted decode max_bs is capped by a user --max-running-requests
    mla_prefill_graph_max_bs: MlaPrefillGraphMaxBs  # the default prefill graph max_bs of an MLA model
    aiter_honors_explicit_mem_fraction_env: bool  # SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION exists
    # arg_groups/cuda_graph_hook.py::apply_cuda_graph_compatibility and its breakable rules
    # PP > 1 turns the default breakable prefill graph off, and an opted-in one is capped at 8192 tokens
    pp_disables_breakable_prefill_graph: bool
    kda_breakable_prefill_graph: KdaBreakable  # a KDA hybrid keeps the default breakable prefill graph, or not
    # mem_cache/kv_cache_configurator.py::_handle_max_mamba_cache and configs/mamba_utils.py
    replayssm_ring: ReplaySSMRing  # GDN ReplaySSM ring: charged on every state slot, or a fixed reservation
    replayssm_gdn_ring_layout: RingLayout  # GDN ring bytes: raw v/k + beta + g, or compact d/k/g (+ low parts)
    replayssm_gdn_ring_length: RingLength  # GDN ring length: the draft-token maximum, or --linear-replayssm-cache-len
    pd_prefill_skips_spec_state: bool  # a PD prefill server reserves no spec-verify state (intermediate SSM)
    mrr_per_dp_floor_one: bool  # max(1, mrr // attn_dp) in the K solve and resolve_max_num_reqs
    post_capture_exempts_capped_full_prefill: bool  # _profile_available_bytes: PD prefill FULL graph, capped reqs
    # speculative decoding
    pathless_mtp_draft_kv: bool  # path-less MTP prices draft KV for the target's num_nextn_predict_layers
    dflash_draft_kv_per_attn_tp_rank: bool  # DFLASH/DSPARK draft KV heads divided by attention TP (else TP)
    dflash_with_attn_dp: bool  # DFLASH with attention DP accepted on CUDA (needs --enable-dp-lm-head)
    dflash_attn_dp_npu_exempt: bool  # the DFLASH attention-DP check spares NPU (its refusal says "on non-NPU devices")
    dspark_pp_on_pd_prefill: bool  # DSPARK with PP > 1 accepted on a PD prefill server
    dspark_markov_rank_in_dflash_config: bool  # a DSpark draft's markov_rank may nest under dflash_config
    # arguments and configs
    hybrid_kda_config: bool  # KDA checks ask configs/hybrid_arch.py::hybrid_kda_config, not kimi_linear_config
    mambaish_pure_mamba: bool  # pure SSM configs (no num_attention_heads) load: Mamba / FalconMamba are mamba-ish
    extra_buffer_on_stateless_arch_refused: bool  # explicit extra_buffer on an arch without mamba state refused

    @property
    def qwen35_text_in_radix_archs(self) -> bool:
        """Text-only Qwen3.5/3.6/3.8 (Qwen3_5ForCausalLM) get the mamba radix cache strategy resolution."""
        return "Qwen3_5ForCausalLM" in self.mamba_radix_cache_archs


@dataclass(frozen=True)
class Change:
    """One release setting one switch, with the engine file::function where it changed."""

    release: str
    switch: str
    value: object
    rule: str


_OV = "arg_groups/overrides.py"
_MEM = "arg_groups/memory_hook.py::handle_gpu_memory_settings"
_CG = "arg_groups/cuda_graph_hook.py"
_KVC = "mem_cache/kv_cache_configurator.py"
_SPEC = "arg_groups/speculative_hook.py"
_MC = "configs/model_config.py"
_AUX = "model_executor/model_runner_components/spec_aux_hidden_state.py"
_DSP = "speculative/dspark_components/dspark_config.py"

CHANGES: tuple[Change, ...] = (
    # 0.5.18: the baseline
    Change("0.5.18", "mamba_radix_cache_archs", frozenset({
        "BailingMoeV2_5ForCausalLM", "FalconH1ForCausalLM", "InternS2MobiusForConditionalGeneration",
        "InternS2PreviewForConditionalGeneration", "JetNemotronForCausalLM", "JetVLMForConditionalGeneration",
        "KimiK3ForConditionalGeneration", "KimiLinearForCausalLM", "Lfm2ForCausalLM", "Lfm2MoeForCausalLM",
        "MiniCPMV4_6ForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
        "Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
        "ZayaForCausalLM"}), f"{_OV}::_MAMBA_RADIX_CACHE_ARCHS"),
    Change("0.5.18", "mamba_extra_buffer_archs", frozenset({
        "BailingMoeV2_5ForCausalLM", "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM",
        "InternS2PreviewForConditionalGeneration", "KimiK3ForConditionalGeneration", "KimiLinearForCausalLM",
        "MiniCPMV4_6ForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
        "Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"}),
        f"{_OV}::_MAMBA_EXTRA_BUFFER_ARCHS"),
    Change("0.5.18", "multimodal_breakable_graph_archs", frozenset({
        "InternS2MobiusForConditionalGeneration", "KimiK25ForConditionalGeneration", "KimiK3ForConditionalGeneration",
        "MuseGlimmerForConditionalGeneration", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"}),
        f"{_MC}::multimodal_breakable_cuda_graph_supported_model_archs"),
    Change("0.5.18", "mid_tier_chunk_and_graph", (2048, 24, 80), "server_args.py::_handle_gpu_memory_settings"),
    Change("0.5.18", "unknown_gpu_mem_fraction", 0.88, "server_args.py::_handle_gpu_memory_settings"),
    Change("0.5.18", "xpu_extra_reserve_mib", 0, "server_args.py::_handle_gpu_memory_settings"),
    Change("0.5.18", "decode_graph_capped_by_mrr", False, "server_args.py::_handle_gpu_memory_settings"),
    Change("0.5.18", "mla_prefill_graph_max_bs", "fixed_2048", "server_args.py::_handle_gpu_memory_settings"),
    Change("0.5.18", "aiter_honors_explicit_mem_fraction_env", False,
           "server_args.py::_handle_attention_backend_compatibility (aiter x0.85, always)"),
    Change("0.5.18", "pp_disables_breakable_prefill_graph", False,
           "server_args.py::_apply_cuda_graph_compatibility (no PP rule; _handle_gpu_memory_settings: no PP cap)"),
    Change("0.5.18", "kda_breakable_prefill_graph", "kept",
           "server_args.py::_disable_breakable_cudagraph_if_incompatible (no KDA rule)"),
    Change("0.5.18", "replayssm_ring", "per_slot", f"{_KVC}::_handle_max_mamba_cache"),
    Change("0.5.18", "replayssm_gdn_ring_layout", "raw", "configs/mamba_utils.py::BaseLinearStateParams.replayssm_ring_bytes_per_req"),
    Change("0.5.18", "replayssm_gdn_ring_length", "max_draft_tokens", f"{_KVC}::_handle_max_mamba_cache"),
    Change("0.5.18", "pd_prefill_skips_spec_state", False, f"{_KVC}::_handle_max_mamba_cache"),
    Change("0.5.18", "mrr_per_dp_floor_one", False, f"{_KVC}::_handle_max_mamba_cache"),
    Change("0.5.18", "post_capture_exempts_capped_full_prefill", False, f"{_KVC}::_profile_available_bytes"),
    Change("0.5.18", "pathless_mtp_draft_kv", False, f"{_AUX}::_resolve_eagle_aux_hidden_state (draft path only)"),
    Change("0.5.18", "dflash_draft_kv_per_attn_tp_rank", False,
           "model_executor/model_runner_components/spec_aux_hidden_state.py::_resolve_dflash_draft_cell_size"),
    Change("0.5.18", "dflash_with_attn_dp", False, f"{_SPEC}::_handle_dflash"),
    Change("0.5.18", "dflash_attn_dp_npu_exempt", False, f"{_SPEC}::_handle_dflash"),
    Change("0.5.18", "dspark_pp_on_pd_prefill", False, f"{_SPEC}::_handle_dspark"),
    Change("0.5.18", "dspark_markov_rank_in_dflash_config", False, f"{_DSP}::_get_dspark_config (dspark_config only)"),
    Change("0.5.18", "hybrid_kda_config", False, f"{_KVC}::_build_hybrid_req_pool (kimi_linear_config)"),
    Change("0.5.18", "mambaish_pure_mamba", False,
           "configs/model_config.py::ModelConfig._derive_model_shapes (num_attention_heads read unconditionally)"),
    Change("0.5.18", "extra_buffer_on_stateless_arch_refused", False, "server_args.py::_handle_mamba_radix_cache"),
    # 0.5.19
    Change("0.5.19", "mamba_radix_cache_archs",
           frozenset({"Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "BailingMoeV3ForCausalLM"}),
           f"{_OV}::_MAMBA_RADIX_CACHE_ARCHS"),
    Change("0.5.19", "mamba_extra_buffer_archs",
           frozenset({"Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "BailingMoeV3ForCausalLM"}),
           f"{_OV}::_MAMBA_EXTRA_BUFFER_ARCHS"),
    Change("0.5.19", "multimodal_breakable_graph_archs", frozenset({
        "Cohere2VisionForConditionalGeneration", "PaddleOCRVLForConditionalGeneration"}),
        f"{_MC}::multimodal_breakable_cuda_graph_supported_model_archs"),
    Change("0.5.19", "pp_disables_breakable_prefill_graph", True,
           f"{_CG}::apply_cuda_graph_compatibility, {_MEM} (_DEFAULT_PP_PREFILL_CUDA_GRAPH_MAX_TOKENS)"),
    Change("0.5.19", "aiter_honors_explicit_mem_fraction_env", True,
           "arg_groups/attention_hook.py::handle_attention_backend_compatibility"),
    # 0.5.20
    Change("0.5.20", "mamba_radix_cache_archs", frozenset({
        "Glm5NextForConditionalGeneration", "NemotronH_Omni_Reasoning_V3", "Qwen4ExpForConditionalGeneration"}),
        f"{_OV}::_MAMBA_RADIX_CACHE_ARCHS"),
    Change("0.5.20", "mamba_extra_buffer_archs", frozenset({
        "Glm5NextForConditionalGeneration", "NemotronH_Omni_Reasoning_V3", "Qwen4ExpForConditionalGeneration"}),
        f"{_OV}::_MAMBA_EXTRA_BUFFER_ARCHS"),
    Change("0.5.20", "multimodal_breakable_graph_archs", frozenset({"Glm5NextForConditionalGeneration"}),
           f"{_MC}::multimodal_breakable_cuda_graph_supported_model_archs"),
    Change("0.5.20", "mid_tier_chunk_and_graph", (4096, 48, 160), _MEM),
    Change("0.5.20", "unknown_gpu_mem_fraction", 0.95, _MEM),
    Change("0.5.20", "xpu_extra_reserve_mib", 2048, _MEM),
    Change("0.5.20", "kda_breakable_prefill_graph", "disabled", f"{_CG}::disable_breakable_cudagraph_if_incompatible"),
    Change("0.5.20", "replayssm_ring", "fixed", f"{_KVC}::_handle_max_mamba_cache"),
    Change("0.5.20", "replayssm_gdn_ring_layout", "compact",
           "configs/mamba_utils.py::BaseLinearStateParams.replayssm_ring_bytes_per_req"),
    Change("0.5.20", "replayssm_gdn_ring_length", "cache_len", f"{_KVC}::_handle_max_mamba_cache"),
    Change("0.5.20", "mambaish_pure_mamba", True,
           "configs/model_config.py::ModelConfig._derive_model_shapes (head_dim 0), configs/hybrid_arch.py::mamba2_config"),
    Change("0.5.20", "dflash_attn_dp_npu_exempt", True, f"{_SPEC}::_handle_dflash"),
    Change("0.5.20", "pathless_mtp_draft_kv", True, f"{_AUX}::_resolve_eagle_aux_hidden_state"),
    # 0.5.21
    Change("0.5.21", "mamba_radix_cache_archs", frozenset({"BailingMoeV3VLForConditionalGeneration"}),
           f"{_OV}::_MAMBA_RADIX_CACHE_ARCHS"),
    Change("0.5.21", "mamba_extra_buffer_archs", frozenset({
        "BailingMoeV3VLForConditionalGeneration", "InklingForConditionalGeneration",
        "InklingForConditionalGenerationMTP"}), f"{_OV}::_MAMBA_EXTRA_BUFFER_ARCHS"),
    Change("0.5.21", "dspark_pp_on_pd_prefill", True, f"{_SPEC}::_handle_dspark"),
    Change("0.5.21", "hybrid_kda_config", True, f"{_KVC}::_build_hybrid_req_pool, _handle_max_mamba_cache"),
    Change("0.5.21", "extra_buffer_on_stateless_arch_refused", True, "arg_groups/model_hook.py::handle_mamba_radix_cache"),
    # 0.5.22
    Change("0.5.22", "decode_graph_capped_by_mrr", True, _MEM),
    Change("0.5.22", "multimodal_breakable_graph_archs", frozenset({
        "MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration", "Qwen4ExpForConditionalGeneration"}),
        f"{_MC}::multimodal_breakable_cuda_graph_supported_model_archs"),
    Change("0.5.22", "kda_breakable_prefill_graph", "disabled_but_glm5_next",
           f"{_CG}::disable_breakable_cudagraph_if_incompatible"),
    Change("0.5.22", "pd_prefill_skips_spec_state", True, f"{_KVC}::_pd_prefill_skips_mamba_spec_state"),
    Change("0.5.22", "post_capture_exempts_capped_full_prefill", True, f"{_KVC}::_profile_available_bytes"),
    Change("0.5.22", "dflash_draft_kv_per_attn_tp_rank", True,
           "model_executor/model_runner_components/spec_aux_hidden_state.py::_resolve_dflash_draft_cell_size"),
    # 0.5.23
    Change("0.5.23", "mamba_radix_cache_archs", frozenset({"MiniCPMV4_7ForConditionalGeneration"}),
           f"{_OV}::_MAMBA_RADIX_CACHE_ARCHS"),
    Change("0.5.23", "mamba_extra_buffer_archs", frozenset({"MiniCPMV4_7ForConditionalGeneration"}),
           f"{_OV}::_MAMBA_EXTRA_BUFFER_ARCHS"),
    Change("0.5.23", "multimodal_breakable_graph_archs", frozenset({"MuseSparkForConditionalGeneration"}),
           f"{_MC}::multimodal_breakable_cuda_graph_supported_model_archs"),
    Change("0.5.23", "mla_prefill_graph_max_bs", "chunk_capped_8192", _MEM),
    Change("0.5.23", "mrr_per_dp_floor_one", True, f"{_KVC}::_handle_max_mamba_cache, resolve_max_num_reqs"),
    Change("0.5.23", "dflash_with_attn_dp", True, f"{_SPEC}::_handle_dflash"),
    Change("0.5.23", "dspark_markov_rank_in_dflash_config", True, f"{_DSP}::_get_dspark_config"),
)

_ACCUMULATE = ("mamba_radix_cache_archs", "mamba_extra_buffer_archs", "multimodal_breakable_graph_archs")


@dataclass(frozen=True)
class Override:
    """One switch a build sets unlike its base release, with what shows it."""

    switch: str
    value: object
    evidence: str


@dataclass(frozen=True)
class Profile:
    """A build between releases: `base`'s switches and flag registry, with `overrides` where its measurements differ."""

    name: str  # what --engine-version and a page's build name it by (the short commit)
    base: str
    overrides: tuple[Override, ...]
    source: str  # where the build is described

    def describe(self) -> str:
        """'sglang 0.5.18's rules with a, b as build 1cf2b8c measured them' (the modelling, in one line)."""
        changed = ", ".join(f"{o.switch}={o.value!r}" for o in self.overrides)
        return f"sglang {self.base}'s rules" + (f" with {changed}" if changed else "") + f" (build {self.name})"


_PAGE_1CF2B8C = "docs/src/snippets/configs/Qwen/qwen3.8-27b.jsx @ 00ac710 (pins measured on 1cf2b8c)"

PROFILES: tuple[Profile, ...] = (
    # the Qwen3.8-27B cookbook's build (data/sglang_builds.yaml): a dev build between 0.5.17 and 0.5.18. Its measured
    # defaults are 0.5.18's, not 0.5.23's: a 2048-token default prefill chunk on the 32 GB RTX 5090 (20-35 GiB tier;
    # 0.5.20 raised it to 4096) and a default decode graph set that --max-running-requests 1 does not cap (0.5.22
    # caps it). It ran the nested DSpark draft config, which 0.5.18 refuses.
    Profile("1cf2b8c", "0.5.18", (
        Override("dspark_markov_rank_in_dflash_config", True,
                 f"{_PAGE_1CF2B8C}: the DSPARK cells with RadixArk/Qwen3.8-27B-DSpark (markov_rank under "
                 "dflash_config) served on every SM120 card and GB10"),
    ), "https://github.com/sgl-project/sglang/pull/35825 (the page unified on 1cf2b8c and re-measured every pin)"),
    # the first Qwen3.8 image, lmsysorg/sglang:qwen38-27b (digest febfb971, "0.0.0.dev0+qwen38.27b.g561c8f3",
    # data/sglang_builds.yaml): a dev build between 0.5.17 and 0.5.18, before 1cf2b8c. It served the DSpark draft's
    # nested config, which 0.5.18 refuses; nothing its users measured shows another of 0.5.18's switches moved.
    Profile("561c8f3", "0.5.18", (
        Override("dspark_markov_rank_in_dflash_config", True,
                 "MiaAI-Lab/Qwen3.8-27B-SGLang-DGX-Spark start-dspark.sh @ 9acf62d: RadixArk/Qwen3.8-27B-DSpark served "
                 "on GB10 on the febfb971 image (block 7, 8 draft tokens, at 0.90)"),
    ), "https://github.com/sgl-project/sglang/issues/34872 (sglang 0.0.0.dev0+qwen38.27b.g561c8f3, image febfb971)"),
)
"""The named build profiles. The switches a profile keeps from its base are checked against the build's records too:
mid_tier_chunk_and_graph (2048, 24, 80) - the DFLASH2 bf16 pin's comment, "a prefill chunk smaller than the engine
default: at 0.91 the pools fit but a 2048-token chunk's activations do not"; decode_graph_capped_by_mrr False - the
RTX 5090 cell's comment, "--cuda-graph-max-bs-decode 1 also protects the token pool (default capture set costs
39,247 -> 37,347 and K 8 -> 7)" at --max-running-requests 1 (tests/engine/test_profiles.py)."""

_BY_NAME = {p.name: p for p in PROFILES}


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def profile(name: str) -> Profile | None:
    """The build profile of that name, or None for a release (or an unknown name)."""
    return _BY_NAME.get(name)


def check_version(version: str) -> str:
    """The version (a release or a build profile's name) itself, or BadInput naming the supported ones."""
    if version not in VERSIONS and version not in _BY_NAME:
        raise BadInput(f"unsupported engine version {version!r}; supported: {', '.join(VERSIONS)}"
                       + (f"; build profiles: {', '.join(_BY_NAME)}" if _BY_NAME else ""))
    return version


def base_release(version: str) -> str:
    """The release whose flag registry a version parses with: itself, or a profile's base."""
    p = _BY_NAME.get(check_version(version))
    return p.base if p is not None else version


@lru_cache(maxsize=None)
def switches(version: str) -> Switches:
    """Every switch's value in `version`: the history folded up to that release; a profile's overrides on top."""
    release = base_release(version)
    values: dict[str, object] = {}
    for ch in CHANGES:
        if _key(ch.release) > _key(release):
            continue
        old = values.get(ch.switch)
        values[ch.switch] = old | ch.value if ch.switch in _ACCUMULATE and old is not None else ch.value  # type: ignore[operator]
    p = _BY_NAME.get(version)
    for o in p.overrides if p is not None else ():
        if o.switch not in values:
            raise KeyError(o.switch)
        values[o.switch] = o.value
    return Switches(version=version, **values)  # type: ignore[arg-type]


def changes_in(version: str) -> tuple[Change, ...]:
    """What `version` changed from the release before it (the baseline for the oldest)."""
    return tuple(ch for ch in CHANGES if ch.release == check_version(version))


def rule_for(version: str, switch: str) -> Change:
    """The change that gave `switch` its value in `version` (for accumulating lists: the last addition)."""
    found = [ch for ch in CHANGES if ch.switch == switch and _key(ch.release) <= _key(base_release(version))]
    if not found:
        raise KeyError(switch)
    return found[-1]


SWITCH_NAMES = tuple(f.name for f in fields(Switches) if f.name != "version")
