"""Attention-DP, PP and the deprecated --enable-dp-attention: what one rank allocates."""

from __future__ import annotations

from hybridplan.engine.sglang.sizing import pp_indices, pp_layer_scale, size_pools, state_tp
from tests.conftest import resolve_cmd

QNEXT = "--model-path Qwen/Qwen3-Next-80B-A3B-Thinking"


def test_attention_dp_divides_explicit_pins_and_mrr():
    args, geo, draft = resolve_cmd(f"{QNEXT} --tp 4 --attn-dp-size 2 --max-mamba-cache-size 100 --max-running-requests 64")
    assert args["attn_tp_size"] == 2 and state_tp(args, geo) == 2
    s = size_pools(60.0, args, geo, draft)
    assert s.max_mamba_cache_size == 50  # global pin // attn_dp
    assert s.requests.requested == 32  # global mrr // attn_dp
    assert s.max_running_requests == 10 and s.requests.binding == "state_pool"  # 50 // 5


def test_deprecated_enable_dp_attention_moves_dp_size():
    args, _, _ = resolve_cmd(f"{QNEXT} --tp 4 --dp-size 4 --enable-dp-attention")
    assert (args["attn_dp_size"], args["dp_size"], args["attn_tp_size"]) == (4, 1, 1)


def test_ratio_branch_k_is_per_gpu_and_not_divided():
    a1, g1, _ = resolve_cmd(f"{QNEXT} --tp 2")
    a2, g2, _ = resolve_cmd(f"{QNEXT} --tp 4 --attn-dp-size 2")
    assert size_pools(50.0, a1, g1).max_mamba_cache_size == size_pools(50.0, a2, g2).max_mamba_cache_size


def test_pp_split_and_largest_stage_scale():
    assert [pp_indices(48, r, 2, None) for r in range(2)] == [(0, 24), (24, 48)]
    assert [pp_indices(10, r, 3, None) for r in range(3)] == [(0, 3), (3, 6), (6, 10)]  # the last ranks take the extra
    assert pp_indices(10, 1, 2, "4,6") == (4, 10)
    args, geo, _ = resolve_cmd(f"{QNEXT} --pp-size 2")
    assert pp_layer_scale(args, geo) == 0.5 and args["disable_overlap_schedule"] is True
    s = size_pools(40.0, args, geo)
    assert s.state.per_slot == 77_266_944 // 2
    assert s.slots_per_request == 4  # extra_buffer chosen before PP turned overlap off


def test_pp_env_partition_changes_the_scale():
    args, geo, _ = resolve_cmd(f"SGLANG_PP_LAYER_PARTITION=12,36 python -m sglang.launch_server {QNEXT} --pp-size 2")
    assert pp_layer_scale(args, geo) == 27 / 36  # 27 of the 36 GDN layers sit in layers 12..47


def test_a_pd_decode_server_keeps_no_radix_cache_so_one_slot_a_request():
    from hybridplan.engine.sglang.engine import engine_for

    decode, _, _ = resolve_cmd(f"{QNEXT} --tp 4 --disaggregation-mode decode")
    prefill, _, _ = resolve_cmd(f"{QNEXT} --tp 4 --disaggregation-mode prefill")
    kept, _, _ = resolve_cmd(f"{QNEXT} --tp 4 --disaggregation-mode decode --disaggregation-decode-enable-radix-cache")
    assert decode["disable_radix_cache"] is True and prefill["disable_radix_cache"] is False
    assert kept["disable_radix_cache"] is False
    engine = engine_for(decode.version)
    assert engine.slots_per_request(decode) == 1 and engine.slots_per_request(prefill) > 1


def test_a_pd_decode_server_reserves_extra_slots_only_for_small_per_worker_caps():
    small, _, _ = resolve_cmd(f"{QNEXT} --tp 4 --attn-dp-size 2 --max-running-requests 40 --disaggregation-mode decode")
    large, _, _ = resolve_cmd(f"{QNEXT} --tp 4 --attn-dp-size 2 --max-running-requests 80 --disaggregation-mode decode")
    uncapped, _, _ = resolve_cmd(f"{QNEXT} --tp 4 --disaggregation-mode decode")
    assert small["disaggregation_decode_extra_slots"] == 40  # 20 a worker <= 32: twice that
    assert large["disaggregation_decode_extra_slots"] == 0  # 40 a worker
    assert uncapped["disaggregation_decode_extra_slots"] == 0


def test_pd_roles_refuse_the_fake_transfer_backend_where_the_engine_does():
    import pytest

    from hybridplan.errors import EngineRefusal

    with pytest.raises(EngineRefusal, match="Prefill server does not support 'fake'"):
        resolve_cmd(f"{QNEXT} --disaggregation-mode prefill --disaggregation-transfer-backend fake")
    with pytest.raises(EngineRefusal, match="incompatible with --disaggregation-transfer-backend fake"):
        resolve_cmd(f"{QNEXT} --disaggregation-mode decode --disaggregation-transfer-backend fake "
                    "--disaggregation-decode-enable-radix-cache")
    args, _, _ = resolve_cmd(f"{QNEXT} --disaggregation-mode decode --disaggregation-transfer-backend fake")
    assert args["disable_radix_cache"] is True


def test_a_decode_server_with_extra_slots_says_the_pool_raise_is_not_modelled():
    args, _, _ = resolve_cmd(f"{QNEXT} --tp 4 --max-running-requests 16 --disaggregation-mode decode")
    assert args["disaggregation_decode_extra_slots"] == 32
    assert any(n.startswith("PD decode: 32 extra request slots per worker") for n in args.notes)
