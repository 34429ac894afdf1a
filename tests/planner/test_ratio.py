"""The ratio calculator: the docs' worked values, engine semantics (S, D, pin, env overlay), and exactness with a budget."""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hybridplan.engine.sglang.command import parse_command
from hybridplan.engine.api import for_version
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.engine.sglang.serving.explain import explain
from hybridplan.engine.sglang.serving.ratio import balanced_ratio, ratio_text
from tests.conftest import resolve_cmd

Q = "python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B --kv-cache-dtype fp8_e4m3"
EAGLE = " --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
DSPARK = " --speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark"
DFLASH2 = (" --speculative-algorithm DFLASH --speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2 "
           "--speculative-num-draft-tokens 8")


@pytest.mark.parametrize("extra,L,docs,pin", [
    ("", 5120, "4.59", 320),  # the calculator's defaults: S 5, D 0, fp32 state, fp8 KV
    ("", 9216, "2.55", 320),
    (" --mamba-radix-cache-strategy extra_buffer_lazy", 9216, "2.04", 256),
    (EAGLE, 5120, "8.26", 320),  # H200 EAGLE, D 4
    (DSPARK, 5120, "11.93", 320),  # D = gamma 7 + 1
    (DFLASH2 + " --mamba-radix-cache-strategy extra_buffer_lazy", 5120, "11.01", 256),  # RTX 5090 DFLASH2 HT fp32
])
def test_docs_worked_values(extra, L, docs, pin):
    r = balanced_ratio(Q + extra, request_length=L, concurrency=64)
    assert r["docs_calculator_ratio_text"] == docs
    assert r["max_mamba_cache_size_pin"] == pin
    assert r["state_bytes_per_slot"] == 153_944_064
    f = r["formula"]
    assert f["value"] == pytest.approx((f["S"] + f["D"]) * f["state_bytes_per_slot"] / (f["L"] * f["kv_bytes_per_token"]))
    if r["kv_bytes_per_token"] == r["kv_bytes_per_token_target"]:  # no draft KV: the engine's balance is the docs'
        assert r["mamba_full_memory_ratio_text"] == docs
    else:  # the engine folds the draft's KV into the cell, so its balance point is lower than the docs'
        assert r["mamba_full_memory_ratio"] < r["docs_calculator_ratio"]
        assert any("draft KV" in w for w in r["warnings"])
    assert r["pin_fits"] is None and r["binding_pool"] == "both"


def test_ratio_text_is_the_docs_rounding():
    assert [ratio_text(x) for x in (4.5876, 2.5, 11.0, 0.005, 8.2549)] == ["4.59", "2.5", "11", "0.01", "8.25"]


def test_dspark_d_is_gamma_plus_one_and_replayssm_drops_d():
    assert balanced_ratio(Q + DSPARK, request_length=5120, concurrency=1)["draft_states_per_request"] == 8
    r = balanced_ratio(Q + EAGLE + " --enable-linear-replayssm-spec", request_length=5120, concurrency=1)
    assert r["draft_states_per_request"] == 0 and r["mamba_full_memory_ratio_text"] == "4.59"


def test_env_overlay_gives_a_second_answer():
    base = parse_command(Q)
    overlay = base.with_env(SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK="1")
    a = balanced_ratio(base, request_length=5120, concurrency=64)
    b = balanced_ratio(overlay, request_length=5120, concurrency=64)
    assert (a["slots_per_request"], b["slots_per_request"]) == (5, 4)
    assert (a["max_mamba_cache_size_pin"], b["max_mamba_cache_size_pin"]) == (320, 256)
    assert b["mamba_full_memory_ratio"] == pytest.approx(a["mamba_full_memory_ratio"] * 4 / 5)


def test_pin_is_per_attention_dp_rank():
    r = balanced_ratio("python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Thinking --tp 4 "
                       "--enable-dp-attention --dp 2", request_length=4096, concurrency=33)
    # 33 requests over 2 DP ranks -> 17 per rank x S 5, and the flag is divided by attn_dp_size
    assert r["concurrency_per_rank"] == 17 and r["max_mamba_cache_size_pin"] == 17 * 5 * 2


def test_explicit_pin_or_radix_off_with_mrr_makes_the_ratio_moot():
    r = balanced_ratio(Q + " --max-mamba-cache-size 64", request_length=5120, concurrency=4)
    assert r["mamba_full_memory_ratio"] is None and "no effect" in r["reason"]
    r = balanced_ratio(Q + " --disable-radix-cache" + EAGLE, request_length=5120, concurrency=4)
    assert r["slots_per_request"] == 1 and r["mamba_full_memory_ratio"] is None


def test_bad_workload_is_bad_input():
    with pytest.raises(BadInput):
        balanced_ratio(Q, request_length=0, concurrency=1)


def test_with_a_budget_the_pin_check_and_the_exact_ratio():
    # engine example E3's budget: the balanced split serves 64 requests of 5,120 tokens on each side
    r = balanced_ratio("python -m sglang.launch_server --model-path Qwen/Qwen3.5-27B --mem-fraction-static 0.85",
                       request_length=5120, concurrency=64, budget=66.50734375)
    assert r["state_concurrency"] == 64 and r["kv_concurrency"] == 64 and r["binding_pool"] == "both"
    assert r["at_ratio"]["max_mamba_cache_size"] // 5 == 64
    assert r["pin_fits"] and r["pin_check"]["max_mamba_cache_size"] == 320 and r["meets_concurrency"]
    assert r["mamba_full_memory_ratio_text"] == ratio_text(r["mamba_full_memory_ratio"])


def test_mrr_capped_verify_scratch_means_no_ratio_balances():
    r = balanced_ratio("python -m sglang.launch_server --model-path Qwen/Qwen3.5-27B --mem-fraction-static 0.85"
                       + DSPARK + " --max-running-requests 4", request_length=5120, concurrency=4, budget=66.50734375)
    assert r["mamba_full_memory_ratio"] is None and r["binding_pool"] == "state_pool"
    assert "no ratio balances" in r["reason"] and "--max-mamba-cache-size" in r["reason"]
    lim = r["search"]["limit"]
    assert lim["state_concurrency"] < lim["kv_concurrency"]
    assert r["pin_fits"] and r["pin_check"]["max_running_requests"] == 4


def test_pin_that_does_not_fit_says_why_in_numbers():
    r = balanced_ratio("python -m sglang.launch_server --model-path Qwen/Qwen3.5-27B --mem-fraction-static 0.85"
                       " --speculative-algorithm NEXTN", request_length=5120, concurrency=64, budget=66.50734375)
    assert r["pin_fits"] is False and "GiB of state" in r["pin_check"]["reason"]
    n = r["pin_check"]["needs"]
    assert n["state_pool_bytes"] == 321 * 153_944_064  # K = 320 plus the padding row
    assert n["spec_scratch_bytes"] == 153_944_064 * 49 * 4  # min(48, 320 // 5) + 1 rows x D 4


# ---------------------------------------------------------------------------------------------- exactness


COMMANDS = ("python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B",
            "python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B --speculative-algorithm NEXTN",
            "python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B" + DSPARK + " --max-running-requests 8",
            "python -m sglang.launch_server --model-path moonshotai/Kimi-Linear-48B-A3B-Instruct --page-size 64",
            "python -m sglang.launch_server --model-path nvidia/NVIDIA-Nemotron-Nano-9B-v2 --mamba-ssm-dtype bfloat16")


@lru_cache(maxsize=None)
def _resolved(cmd: str):
    return resolve_cmd(cmd)


def _served(cmd: str, budget: float, r: float, L: int) -> int:
    args, geo, draft = _resolved(f"{cmd} --mamba-full-memory-ratio {r!r}")
    try:
        s = for_version(args.version).size_pools(budget, args, geo, draft)
    except EngineRefusal:
        return -1
    return min(s.max_mamba_cache_size // s.slots_per_request, s.max_total_num_tokens // L)


@settings(max_examples=25, deadline=None)
@given(cmd=st.sampled_from(COMMANDS), budget=st.floats(4, 160), L=st.integers(256, 65536))
def test_no_ratio_serves_more_than_the_balanced_one(cmd, budget, L):
    r = balanced_ratio(cmd, request_length=L, concurrency=1, budget=budget)
    best = max(_served(cmd, budget, 10 ** (k / 40), L) for k in range(-120, 161))  # 0.001 .. 10,000
    if r["mamba_full_memory_ratio"] is None:
        assume(r["search"] is not None)
        lim = r["search"]["limit"]
        if r["binding_pool"] == "state_pool" and lim["kv_concurrency"] > lim["state_concurrency"]:
            assert best <= lim["state_concurrency"]  # the state side binds at every ratio
        return
    got = _served(cmd, budget, r["mamba_full_memory_ratio"], L)
    assert got == min(r["state_concurrency"], r["kv_concurrency"])
    assert got >= best


@settings(max_examples=25, deadline=None)
@given(cmd=st.sampled_from(COMMANDS[:3]), budget=st.floats(20, 160), L=st.integers(1024, 32768),
       C=st.integers(1, 40))
def test_the_pin_is_the_smallest_that_serves_c(cmd, budget, L, C):
    r = balanced_ratio(cmd, request_length=L, concurrency=C, budget=budget)
    assume(r["pin_fits"])
    pin = r["max_mamba_cache_size_pin"]
    d = explain(f"{cmd} --max-mamba-cache-size {pin}", budget=budget)
    S = d["slots_per_request"]
    assert d["max_mamba_cache_size"] // S >= C and d["max_total_num_tokens"] >= C * L and d["max_running_requests"] >= C
    less = explain(f"{cmd} --max-mamba-cache-size {pin - 1}", budget=budget)
    assert "error" in less or less["max_mamba_cache_size"] // S < C  # one slot less admits fewer than C


@pytest.mark.parametrize("version", ["0.5.19", "0.5.23"])
def test_ratio_for_k_is_the_smallest_ratio_with_k_slots_under_each_releases_ring(version):
    """The ReplaySSM ring is charged on every slot before 0.5.20 and as a fixed mrr/dp + 1 reservation after; the
    inverse the planner searches with follows the release (engine.ring_charges), so the ratio it finds is minimal."""
    from hybridplan.engine.sglang.types import PoolBudget
    from hybridplan.engine.sglang.serving.loading import load
    from hybridplan.engine.sglang.serving.ratio import Search, sizes_of

    loaded = load(Q + EAGLE + " --enable-linear-replayssm-spec --max-running-requests 8", version=version)
    engine = for_version(version)
    per_slot_ring, fixed_ring = engine.ring_charges(loaded.args, loaded.geometry)
    assert (per_slot_ring > 0, fixed_ring > 0) == ((True, False) if version == "0.5.19" else (False, True))
    search = Search(loaded, PoolBudget(rest_gib=40.0), sizes_of(loaded), 5120)
    for K in (8, 40, 120, 150):
        r = search.ratio_for_k(K)
        assert search.at(r).K >= K > search.at(r * (1 - 1e-6)).K, (K, r)


@pytest.mark.parametrize("version, charged", [("0.5.19", "on every state slot"),
                                              ("0.5.23", "as a fixed mrr/dp + 1 reservation")])
def test_explain_says_where_the_ring_figure_comes_from(version, charged):
    d = explain(Q + EAGLE + " --enable-linear-replayssm-spec --max-running-requests 8", version=version)
    prov = d["provenance"]["replayssm_ring_bytes_per_request"]
    assert prov["value"] == d["replayssm_ring_bytes_per_request"] > 0 and prov["source"] == "engine rule"
    assert f"sglang {version}'s layout" in prov["note"] and charged in prov["note"]
    off = explain(Q, version=version)["provenance"]["replayssm_ring_bytes_per_request"]
    assert off["value"] == 0 and "no ReplaySSM ring" in off["note"]
