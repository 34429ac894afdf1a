"""The engine spec's end-to-end worked examples (engine-semantics.md §4.9), through the same path `explain` uses."""

from __future__ import annotations

import json

import pytest

from hybridplan.engine.sglang.budget import pool_budget
from hybridplan.engine.sglang.sizing import size_pools
from tests.conftest import resolve_cmd

QNEXT = "python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Thinking --tp 4 --mem-fraction-static 0.897"
Q27 = "python -m sglang.launch_server --model-path Qwen/Qwen3.5-27B --mem-fraction-static 0.85"


def run(cmd: str, A: float, P: float):
    args, geo, draft = resolve_cmd(cmd)
    return size_pools(pool_budget(A, P, args), args, geo, draft), args


def test_e1_qwen3_next_tp4_no_spec():
    s, args = run(QNEXT, 100.0, 139.5)
    assert s.slots_per_request == 5 and s.state_bytes_per_slot == 19_316_736 and s.cell.total == 12_288
    assert s.max_mamba_cache_size == 2253
    assert s.max_total_num_tokens == 3_939_306
    assert s.max_running_requests == 450 and s.requests.binding == "state_pool"


def test_e2_nextn_path_less_and_with_draft_path():
    s, args = run(QNEXT + " --speculative-algorithm NEXTN", 100.0, 139.5)
    assert (args["speculative_num_steps"], args["speculative_eagle_topk"], args["speculative_num_draft_tokens"]) == (3, 1, 4)
    assert args["max_running_requests"] == 48 and args["speculative_algorithm"] == "EAGLE"
    assert s.max_mamba_cache_size == 1249
    assert s.state.spec_rows == 49  # min(48, 1249 // 5) + 1
    assert s.cell.total == 12_288  # path-less: the Qwen config has mtp_num_hidden_layers, not num_nextn_predict_layers
    assert s.max_total_num_tokens == 5_209_482
    assert s.max_running_requests == 48
    s2, _ = run(QNEXT + " --speculative-algorithm NEXTN --speculative-draft-model-path Qwen/Qwen3-Next-80B-A3B-Thinking",
                100.0, 139.5)
    assert s2.cell.total == 13_312 and s2.max_total_num_tokens == 4_808_753


def test_e3_qwen35_27b_multimodal_reservation():
    s, args = run(Q27, 87.5, 139.3)
    assert args["is_multimodal"]
    assert s.max_mamba_cache_size == 218 and s.max_total_num_tokens == 575_225
    assert s.max_running_requests == 43


@pytest.mark.parametrize("extra,K,n,T", [
    ("", 119, 23, 582_272),
    (" --mamba-ssm-dtype bfloat16", 236, 47, None),
])
def test_e4_nextn(extra, K, n, T):
    s, _ = run(Q27 + " --speculative-algorithm NEXTN" + extra, 87.5, 139.3)
    assert s.max_mamba_cache_size == K and s.max_running_requests == n
    if T is not None:
        assert s.max_total_num_tokens == T


def test_e5_dflash_with_a_5_layer_draft(tmp_path):
    draft = {"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "num_hidden_layers": 5,
             "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "hidden_size": 5120,
             "dtype": "bfloat16", "block_size": 16}
    (tmp_path / "config.json").write_text(json.dumps(draft))
    s, args = run(Q27 + f" --speculative-algorithm DFLASH --speculative-draft-model-path {tmp_path}", 85.5, 139.3)
    assert args["speculative_num_draft_tokens"] == 16 and s.draft_states_per_request == 16
    assert s.cell.draft == 10_240 and s.cell.total == 75_776
    assert s.max_mamba_cache_size == 46 and s.max_running_requests == 9
    assert s.max_total_num_tokens == 493_531


def test_e6_radix_off_no_mrr():
    s, _ = run(Q27 + " --disable-radix-cache", 87.5, 139.3)
    assert s.slots_per_request == 1
    assert s.max_mamba_cache_size == 218 and s.max_total_num_tokens == 575_225 and s.max_running_requests == 218


def test_e7_replayssm_spec_gdn_ring():
    args, geo, _ = resolve_cmd(QNEXT + " --speculative-algorithm NEXTN --enable-linear-replayssm-spec")
    assert geo.replayssm_ring_bytes(4, 16) == 3_557_376
    s, _ = run(QNEXT + " --speculative-algorithm NEXTN --enable-linear-replayssm-spec", 100.0, 139.5)
    assert s.draft_states_per_request == 0 and s.state.spec_scratch_bytes == 0
    assert s.state.replayssm_fixed == 3_557_376 * 49
    assert s.max_mamba_cache_size == 2244 and s.max_total_num_tokens == 3_939_269 and s.max_running_requests == 48
