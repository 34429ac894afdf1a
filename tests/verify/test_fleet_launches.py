"""The public launches in fleet layouts (data/fleet_launches.yaml): each resolves under the modelled release, a pool
its log prints is the model's, and a PD decode server holds one state slot a session."""

from __future__ import annotations

from hybridplan.calibration.fleet_launches import check, load


def test_every_logged_pool_is_the_models():
    checks = [check(x) for x in load()]
    assert {c.launch.id for c in checks if c.agrees is not None} == {"sglang-pr10622-qwen3next-fp8-attention-dp4"}
    assert all(c.agrees for c in checks if c.agrees is not None), [(c.launch.id, c.predicted) for c in checks]


def test_attention_dp_keeps_every_kv_head_on_a_rank_and_a_decode_server_one_slot_a_session():
    by_id = {c.launch.id: c for c in map(check, load())}
    dp = by_id["sglang-pr10622-qwen3next-fp8-attention-dp4"]
    assert dp.kv_bytes_per_token == 12 * 2 * 2 * 256 * 2  # 12 full-attention layers x K,V x 2 KV heads x 256 x bf16
    assert by_id["sglang-pr16056-qwen3next-pd-prefill-tp2-decode-dp2"].slots_per_request == 1
