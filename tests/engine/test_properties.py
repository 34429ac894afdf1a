"""Invariants of the engine model: monotonicity in budget, ratio and dtype; the pools never exceed the budget."""

from __future__ import annotations

from functools import lru_cache

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hybridplan.engine.sglang.sizing import size_pools
from hybridplan.errors import EngineRefusal
from tests.conftest import resolve_cmd

GIB = 1 << 30
MODELS = ("Qwen/Qwen3.8-27B", "Qwen/Qwen3-Next-80B-A3B-Thinking", "moonshotai/Kimi-Linear-48B-A3B-Instruct",
          "nvidia/NVIDIA-Nemotron-Nano-9B-v2")
EXTRAS = ("", " --speculative-algorithm EAGLE", " --mamba-radix-cache-strategy extra_buffer_lazy", " --disable-radix-cache",
          " --speculative-algorithm NGRAM", " --max-mamba-cache-size 64")


@lru_cache(maxsize=None)
def resolved(model: str, extra: str, ratio: float | None = None, ssm: str | None = None):
    flags = f"--model-path {model}{extra}"
    if ratio is not None:
        flags += f" --mamba-full-memory-ratio {ratio}"
    if ssm is not None:
        flags += f" --mamba-ssm-dtype {ssm}"
    return resolve_cmd(flags)


def sized(budget, model, extra, ratio=None, ssm=None):
    args, geo, draft = resolved(model, extra, ratio, ssm)
    try:
        return size_pools(budget, args, geo, draft)
    except EngineRefusal:
        return None


@settings(max_examples=150, deadline=None)
@given(model=st.sampled_from(MODELS), extra=st.sampled_from(EXTRAS), budget=st.floats(0.5, 400), more=st.floats(0, 50))
def test_more_budget_never_shrinks_the_state_pool_or_the_total(model, extra, budget, more):
    """K and the memory the pools take grow with the budget. T alone need not: when one more (large) state slot
    fits, its bytes come out of the KV pool, as in the engine."""
    a, b = sized(budget, model, extra), sized(budget + more, model, extra)
    assume(a is not None)
    assert b is not None  # what starts with less memory starts with more
    assert b.max_mamba_cache_size >= a.max_mamba_cache_size
    used = lambda s: s.kv_budget_bytes + s.state.state_bytes + s.state.spec_scratch_bytes  # noqa: E731
    assert used(b) >= used(a) - 1
    if b.max_mamba_cache_size == a.max_mamba_cache_size:
        assert b.max_total_num_tokens >= a.max_total_num_tokens


@settings(max_examples=150, deadline=None)
@given(model=st.sampled_from(MODELS), extra=st.sampled_from(EXTRAS[:3]), budget=st.floats(5, 400),
       r1=st.floats(0.05, 20), dr=st.floats(0, 5))
def test_a_larger_ratio_moves_memory_from_kv_to_state(model, extra, budget, r1, dr):
    a, b = sized(budget, model, extra, round(r1, 3)), sized(budget, model, extra, round(r1 + dr, 3))
    assume(a is not None and b is not None)
    assert b.max_mamba_cache_size >= a.max_mamba_cache_size
    assert b.max_total_num_tokens <= a.max_total_num_tokens


@settings(max_examples=100, deadline=None)
@given(model=st.sampled_from(MODELS[:3]), extra=st.sampled_from(EXTRAS[:3]), budget=st.floats(5, 400))
def test_bf16_state_holds_at_least_as_many_slots(model, extra, budget):
    a, b = sized(budget, model, extra, ssm="float32"), sized(budget, model, extra, ssm="bfloat16")
    assume(a is not None)
    assert b is not None and b.max_mamba_cache_size >= a.max_mamba_cache_size
    assert b.state_bytes_per_slot < a.state_bytes_per_slot


@settings(max_examples=200, deadline=None)
@given(model=st.sampled_from(MODELS), extra=st.sampled_from(EXTRAS), budget=st.floats(0.5, 400))
def test_pools_fit_the_budget_and_requests_fit_the_pools(model, extra, budget):
    s = sized(budget, model, extra)
    assume(s is not None)
    used = s.state.state_bytes + s.state.spec_scratch_bytes + s.max_total_num_tokens * s.cell.total
    assert used <= budget * GIB + 1
    assert s.max_running_requests * s.slots_per_request <= s.max_mamba_cache_size
    assert s.max_running_requests <= s.max_total_num_tokens // 2
