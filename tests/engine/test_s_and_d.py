"""S (state slots per request) and D (verify states per request) as the engine resolves them."""

from __future__ import annotations

import json

import pytest

from hybridplan.engine.api import for_version
from hybridplan.engine.sglang.sizing import draft_states_per_request, mamba_ratio
from hybridplan.errors import EngineRefusal
from tests.conftest import resolve_cmd

BASE = "--model-path Qwen/Qwen3.8-27B"


@pytest.mark.parametrize("env,flags,S", [
    ("", "", 5),  # auto -> extra_buffer with overlap
    ("", "--disable-overlap-schedule", 3),  # auto without overlap or paging -> no_buffer
    ("", "--mamba-radix-cache-strategy extra_buffer --disable-overlap-schedule", 4),
    ("", "--disable-overlap-schedule --page-size 64", 4),  # auto with paging -> extra_buffer, overlap off
    ("", "--mamba-radix-cache-strategy extra_buffer_lazy", 4),
    ("", "--mamba-radix-cache-strategy no_buffer --disable-overlap-schedule", 3),
    ("", "--disable-radix-cache", 1),
    ("", "--pp-size 2", 4),  # PP turns overlap off after the strategy is chosen
    ("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1", "", 4),
    ("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1", "--mamba-radix-cache-strategy extra_buffer_lazy", 3),
    ("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1", "--mamba-radix-cache-strategy extra_buffer --disable-overlap-schedule", 3),
    ("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1", "--mamba-radix-cache-strategy no_buffer --disable-overlap-schedule", 3),
    ("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=yes", "", 4),
    ("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=bogus", "", 5),  # invalid EnvBool -> default (off)
    ("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1", "--disable-radix-cache", 1),
])
def test_s_table(env, flags, S):
    args, geo, _ = resolve_cmd(f"{env} python -m sglang.launch_server {BASE} {flags}")
    assert mamba_ratio(args) == S


def test_auto_without_extra_buffer_support_goes_no_buffer_and_disables_overlap():
    args, _, _ = resolve_cmd("--model-path Qwen/Qwen3.8-27B --linear-attn-backend flashinfer")
    assert args["mamba_radix_cache_strategy"] == "no_buffer" and args["disable_overlap_schedule"] is True
    assert args.arg("disable_overlap_schedule").source.value == "derived"
    assert mamba_ratio(args) == 3


def test_radix_off_keeps_auto():
    args, _, _ = resolve_cmd(f"{BASE} --disable-radix-cache")
    assert args["mamba_radix_cache_strategy"] == "auto"


@pytest.mark.parametrize("flags,msg", [
    ("--mamba-radix-cache-strategy no_buffer", "no_buffer do not support overlap schedule"),
    ("--mamba-radix-cache-strategy extra_buffer_lazy --disable-overlap-schedule", "Lazy extra buffer requires overlap"),
    ("--mamba-radix-cache-strategy no_buffer --disable-overlap-schedule --page-size 64", "no_buffer only supports page_size=1"),
])
def test_strategy_refusals(flags, msg):
    with pytest.raises(EngineRefusal, match=msg):
        args, geo, _ = resolve_cmd(f"{BASE} {flags}")
        mamba_ratio(args)


@pytest.mark.parametrize("flags,D,steps_topk", [
    ("--speculative-algorithm EAGLE", 4, (3, 1)),
    ("--speculative-algorithm nextn", 4, (3, 1)),
    ("--speculative-algorithm EAGLE --speculative-num-steps 5 --speculative-eagle-topk 1 --speculative-num-draft-tokens 9", 6, (5, 1)),
    ("--speculative-algorithm EAGLE --speculative-num-steps 2 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8", 8, (2, 4)),
    ("--speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark", 8, (1, 1)),  # gamma 7 from the draft
    ("--speculative-algorithm DSPARK --speculative-draft-model-path SpecForge/qwen3.6-27b-dspark", 17, (1, 1)),  # block_size 16
    ("--speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark --speculative-dspark-block-size 3", 4, (1, 1)),
    ("--speculative-algorithm DFLASH --speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2", 16, (1, 1)),
    ("--speculative-algorithm DFLASH --speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2 --speculative-num-draft-tokens 8", 8, (1, 1)),
    ("--speculative-algorithm DFLASH --speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2 --speculative-dflash-block-size 10", 10, (1, 1)),
    ("--speculative-algorithm NGRAM", 12, (1, 10)),
    ("--speculative-algorithm EAGLE --enable-linear-replayssm-spec", 0, (3, 1)),  # ReplaySSM: no verify reservation
])
def test_d_table(flags, D, steps_topk):
    args, geo, _ = resolve_cmd(f"{BASE} {flags}")
    assert draft_states_per_request(args, geo) == D
    assert (args["speculative_num_steps"], args["speculative_eagle_topk"]) == steps_topk
    assert args["max_running_requests"] == 48


def test_dspark_gamma_default_without_a_draft_block_size(tmp_path):
    draft = {"architectures": ["DSparkDraftModel"], "model_type": "qwen3", "num_hidden_layers": 5,
             "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 5120, "dtype": "bfloat16"}
    (tmp_path / "config.json").write_text(json.dumps(draft))
    args, geo, _ = resolve_cmd(f"{BASE} --speculative-algorithm DSPARK --speculative-draft-model-path {tmp_path}")
    assert args["speculative_num_draft_tokens"] == 8  # DEFAULT_DSPARK_GAMMA 7 + 1


@pytest.mark.parametrize("flags,msg", [
    ("--speculative-algorithm MTP", "Unknown speculative algorithm name: MTP"),
    ("--speculative-algorithm DFLASH", "DFLASH speculative decoding requires setting --speculative-draft-model-path"),
    ("--speculative-algorithm DSPARK", "DSpark dense speculative decoding requires setting --speculative-draft-model-path"),
    ("--speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark --speculative-num-draft-tokens 4",
     "must equal gamma \\+ 1 \\(= 8 for gamma=7\\)"),
    ("--speculative-algorithm DFLASH --speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2 --speculative-num-draft-tokens 8 "
     "--speculative-dflash-block-size 16", "they differ"),
    ("--speculative-algorithm DFLASH --speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2 --pp-size 2",
     "only supports pp_size == 1"),
    ("--speculative-algorithm EAGLE --speculative-eagle-topk 1", "assert speculative_eagle_topk is None"),
    ("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8 "
     "--enable-linear-replayssm-spec", "requires a linear draft chain"),
    ("--speculative-algorithm NGRAM --tp 2 --attn-dp-size 2", "ngram speculative decoding does not support dp attention"),
])
def test_spec_refusals_carry_the_engine_message(flags, msg):
    with pytest.raises(EngineRefusal, match=msg):
        resolve_cmd(f"{BASE} {flags}")


def test_replayssm_dspark_on_a_non_kda_model_is_refused_by_the_request_pool():
    """kv_cache_configurator.py::_build_hybrid_req_pool checks it after sizing, so resolution itself passes."""
    args, geo, _ = resolve_cmd(f"{BASE} --speculative-algorithm DSPARK --speculative-draft-model-path "
                               "RadixArk/Qwen3.8-27B-DSpark --enable-linear-replayssm-spec")
    with pytest.raises(EngineRefusal, match=r"^--enable-linear-replayssm-spec with DSPARK/DFLASH requires a KDA model; "
                                            r"got a non-KDA model\.$"):
        for_version(args.version).req_pool_guards(args, geo)


def test_user_mrr_is_kept_under_speculation():
    args, _, _ = resolve_cmd(f"{BASE} --speculative-algorithm EAGLE --max-running-requests 4")
    assert args["max_running_requests"] == 4 and args.arg("max_running_requests").source.value == "explicit"
