"""The per-release switch data: each value as read in the releases' source (scripts/check_behaviours.py re-reads
them from the unpacked wheels), the history's shape, and agreement with the 0.5.23 rules hybridplan models."""

from __future__ import annotations

import pytest

from hybridplan.engine.sglang import behaviours as bh
from hybridplan.engine.sglang import archs, memory_defaults
from hybridplan.errors import BadInput

V18, V19, V20, V21, V22, V23 = bh.VERSIONS

# switch -> value per release 0.5.18 .. 0.5.23, as read in each release's source
EXPECTED = {
    "mid_tier_chunk_and_graph": [(2048, 24, 80)] * 2 + [(4096, 48, 160)] * 4,
    "unknown_gpu_mem_fraction": [0.88, 0.88, 0.95, 0.95, 0.95, 0.95],
    "xpu_extra_reserve_mib": [0, 0, 2048, 2048, 2048, 2048],
    "decode_graph_capped_by_mrr": [False] * 4 + [True] * 2,
    "mla_prefill_graph_max_bs": ["fixed_2048"] * 5 + ["chunk_capped_8192"],
    "aiter_honors_explicit_mem_fraction_env": [False] + [True] * 5,
    "pp_disables_breakable_prefill_graph": [False] + [True] * 5,
    "kda_breakable_prefill_graph": ["kept"] * 2 + ["disabled"] * 2 + ["disabled_but_glm5_next"] * 2,
    "replayssm_ring": ["per_slot"] * 2 + ["fixed"] * 4,
    "replayssm_gdn_ring_layout": ["raw"] * 2 + ["compact"] * 4,
    "replayssm_gdn_ring_length": ["max_draft_tokens"] * 2 + ["cache_len"] * 4,
    "pd_prefill_skips_spec_state": [False] * 4 + [True] * 2,
    "mrr_per_dp_floor_one": [False] * 5 + [True],
    "post_capture_exempts_capped_full_prefill": [False] * 4 + [True] * 2,
    "dflash_draft_kv_per_attn_tp_rank": [False] * 4 + [True] * 2,
    "pathless_mtp_draft_kv": [False] * 2 + [True] * 4,
    "dflash_with_attn_dp": [False] * 5 + [True],
    "dflash_attn_dp_npu_exempt": [False] * 2 + [True] * 4,
    "dspark_pp_on_pd_prefill": [False] * 3 + [True] * 3,
    "dspark_markov_rank_in_dflash_config": [False] * 5 + [True],
    "mambaish_pure_mamba": [False] * 2 + [True] * 4,
    "hybrid_kda_config": [False] * 3 + [True] * 3,
    "extra_buffer_on_stateless_arch_refused": [False] * 3 + [True] * 3,
}


@pytest.mark.parametrize("switch", sorted(EXPECTED))
def test_switch_values_per_release(switch):
    assert [getattr(bh.switches(v), switch) for v in bh.VERSIONS] == EXPECTED[switch]


def test_every_switch_is_checked_and_set_by_the_baseline():
    listed = set(EXPECTED) | set(bh._ACCUMULATE)
    assert listed == set(bh.SWITCH_NAMES)
    assert {ch.switch for ch in bh.changes_in(V18)} == set(bh.SWITCH_NAMES)


def test_the_history_changes_something_each_time():
    """No entry restates the value its switch already had (a no-op entry would cite a change that is not one)."""
    for ch in bh.CHANGES:
        if ch.release == V18:
            continue
        before = getattr(bh.switches(bh.VERSIONS[bh.VERSIONS.index(ch.release) - 1]), ch.switch)
        if ch.switch in bh._ACCUMULATE:
            assert ch.value and not (ch.value & before), ch
        else:
            assert ch.value != before, ch
        assert "::" in ch.rule or "(" in ch.rule, ch


def test_text_only_qwen35_joins_the_radix_lists_in_0_5_19():
    assert [bh.switches(v).qwen35_text_in_radix_archs for v in bh.VERSIONS] == [False] + [True] * 5
    for arch in ("Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"):
        assert arch not in bh.switches(V18).mamba_extra_buffer_archs
        assert arch in bh.switches(V19).mamba_extra_buffer_archs
    # the VL entries were there all along
    assert "Qwen3_5ForConditionalGeneration" in bh.switches(V18).mamba_radix_cache_archs


def test_arch_list_sizes_per_release():
    """The lists as counted in each release's arg_groups/overrides.py and configs/model_config.py."""
    assert [len(bh.switches(v).mamba_radix_cache_archs) for v in bh.VERSIONS] == [17, 20, 23, 24, 24, 25]
    assert [len(bh.switches(v).mamba_extra_buffer_archs) for v in bh.VERSIONS] == [12, 15, 18, 21, 21, 22]
    assert [len(bh.switches(v).multimodal_breakable_graph_archs) for v in bh.VERSIONS] == [6, 8, 9, 9, 12, 13]


@pytest.mark.parametrize("version", bh.VERSIONS)
def test_the_model_reads_each_release_tier(version):
    """The memory tier the model resolves with is the release's switch (24 GiB card, TP 1 and TP 4)."""
    s = bh.switches(version)
    chunk, bs_small, bs_large = s.mid_tier_chunk_and_graph
    assert memory_defaults.tier(24 * 1024, 1, s) == (chunk, bs_small)
    assert memory_defaults.tier(24 * 1024, 4, s) == (chunk, bs_large)


def test_radix_gates_read_each_release_lists():
    """Text-only Qwen3.5 (Qwen3_5ForCausalLM) is gated out in 0.5.18 and in from 0.5.19."""
    assert [archs.uses_mamba_radix_cache("Qwen3_5ForCausalLM", True, bh.switches(v)) for v in bh.VERSIONS] == \
        [False] + [True] * 5
    assert [archs.supports_extra_buffer("Qwen3_5ForCausalLM", "triton", "cuda", bh.switches(v))
            for v in bh.VERSIONS] == [False] + [True] * 5


def test_rule_for_names_the_release_that_set_the_value():
    assert bh.rule_for(V21, "replayssm_ring").release == V20
    assert bh.rule_for(V23, "decode_graph_capped_by_mrr").rule == "arg_groups/memory_hook.py::handle_gpu_memory_settings"
    assert bh.rule_for(V19, "mrr_per_dp_floor_one").release == V18
    assert bh.rule_for(V22, "mamba_radix_cache_archs").release == V21
    with pytest.raises(KeyError):
        bh.rule_for(V23, "no_such_switch")


def test_0_5_20_and_0_5_21_size_alike():
    """The issue's five behaviours: 0.5.21 changes argument checks (and lists new archs), no sizing rule."""
    sizing = {"mid_tier_chunk_and_graph", "unknown_gpu_mem_fraction", "replayssm_ring", "replayssm_gdn_ring_layout",
              "replayssm_gdn_ring_length", "pd_prefill_skips_spec_state", "mrr_per_dp_floor_one",
              "decode_graph_capped_by_mrr", "dflash_draft_kv_per_attn_tp_rank", "qwen35_text_in_radix_archs",
              "pp_disables_breakable_prefill_graph", "kda_breakable_prefill_graph", "pathless_mtp_draft_kv",
              "mambaish_pure_mamba"}
    assert not sizing & {ch.switch for ch in bh.changes_in(V21)}
    distinct = {tuple(getattr(bh.switches(v), n) for n in sorted(sizing)) for v in bh.VERSIONS}
    assert len(distinct) == 5


def test_unknown_version_is_bad_input():
    with pytest.raises(BadInput, match=r"unsupported engine version '0\.5\.17'; supported: 0\.5\.18"):
        bh.switches("0.5.17")
    with pytest.raises(BadInput):
        bh.changes_in("0.5.24")
