"""The headroom estimate: engine-rule buffers exactly, activations from the config widths, and a boot-log cross-check."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridplan.engine.sglang.serving.explain import explain
from hybridplan.engine.sglang.serving.loading import load
from hybridplan.hardware.catalog import lookup
from hybridplan.engine.sglang.serving import headroom as hr
from hybridplan.engine.sglang.serving.constants import constants_for
from hybridplan.engine.sglang.serving.timeline import for_loaded
from hybridplan.models.widths import command_widths
from hybridplan.provenance import Source
from tests.conftest import FIXTURES

GIB, MIB = 1 << 30, 1 << 20
LAUNCH = "python -m sglang.launch_server "
# the docs cookbook's verified H200 recipe (reference/cookbook-semantics.md §6.1)
H200_RECIPE = (LAUNCH + "--model-path Qwen/Qwen3.8-27B-FP8 --mem-fraction-static 0.85 --attention-backend flashinfer "
               "--chunked-prefill-size 32768 --max-prefill-tokens 32768 --kv-cache-dtype fp8_e4m3")
RTX5090_CELL = (LAUNCH + "--model-path RadixArk/Qwen3.8-27B-NVFP4 --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.9 "
                "--attention-backend flashinfer --max-running-requests 1 --cuda-graph-max-bs-decode 1")
# Qwen3.8-27B per token at TP1, bf16 activations (config: hidden 5120, FFN 17408, 24 x 256 gated attention heads,
# 4 KV heads, GDN conv 10240 channels, 48 value heads of 128 x 128):
#   residual stream 3 x 5120 x 2 = 30,720 B; widest layer in prefill = GDN 2 x (16,480 in_proj + 2 x 10,240 conv +
#   3 x 6,144 value + 48 x 64 chunk + 48 x 128 x 128 / 64) + 4 x 48 = 141,696 B; in decode the MLP 3 x 17,408 x 2.
PREFILL_PER_TOKEN = 30_720 + 141_696
DECODE_PER_TOKEN = 30_720 + 104_448


def timeline(command: str, gpu: str, **kw):
    card = lookup(gpu)
    loaded = load(command, platform=card.platform())
    return for_loaded(loaded, gpu=card, **kw)[0], loaded


def parts(tl) -> dict:
    return {p.name: p for p in tl.headroom_parts}


def test_activation_widths_per_token_for_qwen38():
    loaded = load(LAUNCH + "--model-path Qwen/Qwen3.8-27B")
    w, draft = command_widths(loaded.args)
    assert (w.hidden, w.dense_intermediate, w.attn_heads, w.attn_q_mult, w.vocab) == (5120, 17408, 24, 2, 248320)
    assert draft is None and w.mtp_layers == 1
    c = constants_for()
    assert hr.per_token_bytes(loaded.args, loaded.geometry, w, c, prefill=True) == PREFILL_PER_TOKEN
    assert hr.per_token_bytes(loaded.args, loaded.geometry, w, c, prefill=False) == DECODE_PER_TOKEN


def test_h200_recipe_is_realistic_and_keeps_the_engine_reserve_for_reference():
    tl, _ = timeline(H200_RECIPE, "h200")
    p = parts(tl)
    # the old engine heuristic: 512 + 1.5 x 32768 + 128 + (256 x 2 + 106 prefill buckets x 8) MiB
    assert tl.engine_reserve_gib.value * 1024 == pytest.approx(512 + 1.5 * 32768 + 128 + 256 * 2 + 106 * 8)
    assert tl.engine_reserve_gib.value == pytest.approx(49.953125)
    # the graph pool holds one 32,768-token chunk's working set; the decode graph stops at the 59 admitted requests
    assert p["graph_pool"].nbytes == int(32768 * PREFILL_PER_TOKEN * 1.15)
    assert p["req_to_token"].nbytes == 60 * (262_144 + 4) * 4
    assert p["decode_graph_buffers"].nbytes == 59 * 262_144 * 5 + 59 * 248_320 * 4
    assert p["prefill_graph_buffers"].nbytes == 32768 * 5120 * 2  # the VLM's input_embeds buffer
    assert p["attention_workspace"].nbytes == 384 * MIB and p["attention_workspace"].source is Source.ENGINE_RULE
    assert 6 < tl.headroom_gib.value < 10 and tl.slack_fits_headroom
    assert tl.slack_gib.value - tl.slack_need_gib.value > 10  # 0.85 leaves the recipe over 10 GiB to spare
    assert 0.9 < tl.max_safe_mem_fraction.value < 0.96


def test_rtx5090_cell_parts_and_the_highest_verified_pin():
    tl, _ = timeline(RTX5090_CELL, "rtx5090")
    p = parts(tl)
    assert p["req_to_token"].nbytes == 2 * (262_144 + 4) * 4
    assert p["decode_graph_buffers"].nbytes == 1 * 262_144 * 5 + 1 * 248_320 * 4
    assert p["graph_pool"].nbytes == int(4096 * PREFILL_PER_TOKEN * 1.15)  # chunk 4096: the <35 GiB tier default
    assert p["nccl"].nbytes == 0 and p["multimodal_cache"].nbytes == 100 * MIB
    assert tl.slack_fits_headroom
    # the cookbook's highest verified pin on this card is 0.94 (EAGLE, fp32 state): the estimate must allow it
    assert tl.max_safe_mem_fraction.value >= 0.94


def test_speculative_width_and_draft_tables():
    tl, loaded = timeline(RTX5090_CELL.replace("0.9", "0.94") + " --speculative-algorithm EAGLE --speculative-num-steps 3"
                          " --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --enable-linear-replayssm-spec",
                          "rtx5090")
    p = parts(tl)
    # 4 verify rows: index table + logits, and the draft's 3 multi-step index rows (flashinfer_backend.py)
    assert p["decode_graph_buffers"].nbytes == 4 * 262_144 * 5 + 4 * 248_320 * 4 + 3 * 262_144 * 4
    assert p["req_to_token"].nbytes == 2 * (262_144 + 8) * 4  # extra = 4 + num_draft_tokens
    # the path-less MTP head's KV pool (one layer of the 16-layer cell) is allocated but not in the budget
    assert tl.draft_kv_gib.value > 0
    assert tl.pools_gib.value > tl.rest_gib.value
    # the MTP head's own embedding and lm_head are handed back before capture: the slack need is what remains
    released = 2 * 2 * 248_320 * 5120 / (1 << 30)
    assert tl.slack_need_gib.value == pytest.approx(max(0.0, tl.headroom_gib.value - tl.mm_reservation_gib.value
                                                         + tl.pools_gib.value - tl.rest_gib.value - released))


@pytest.mark.parametrize("gpu, backend, workspace_mib", [("h200", "fa3", 0), ("b200", "trtllm_mha", 512),
                                                         ("rtx5090", "flashinfer", 384), ("mi355x", "aiter", 0)])
def test_headroom_prices_the_resolved_backend_and_its_workspace(gpu, backend, workspace_mib):
    card = lookup(gpu)
    loaded = load(LAUNCH + "--model-path Qwen/Qwen3.8-27B-FP8", platform=card.platform())
    assert hr.attention_backend(loaded.args) == loaded.args["attention_backend"] == backend
    size, source, _ = hr.attention_workspace(backend, loaded.geometry, loaded.args, constants_for())
    assert size == workspace_mib * MIB and source is Source.ENGINE_RULE


def test_unknown_card_leaves_the_backend_open_and_the_workspace_estimated():
    loaded = load(LAUNCH + "--model-path Qwen/Qwen3.8-27B-FP8")
    assert hr.attention_backend(loaded.args) is None
    size, source, _ = hr.attention_workspace(None, loaded.geometry, loaded.args, constants_for())
    assert size == 512 * MIB and source is Source.ESTIMATE
    env = load("SGLANG_FLASHINFER_WORKSPACE_SIZE=268435456 " + LAUNCH + "--model-path Qwen/Qwen3.8-27B-FP8")
    assert hr.attention_workspace("flashinfer", env.geometry, env.args, constants_for())[0] == 256 * MIB
    split = load(LAUNCH + "--model-path Qwen/Qwen3.8-27B-FP8 --decode-attention-backend triton",
                 platform=lookup("h200").platform())
    assert (split.args["attention_backend"], hr.attention_backend(split.args)) == ("fa3", "triton")


def test_decode_capture_sizes_follow_the_engine_lists():
    assert len(hr.decode_capture_sizes(256, False)) == 36
    assert hr.decode_capture_sizes(48, True)[-4:] == [32, 40, 44, 48]
    assert hr.decode_capture_sizes(1, False) == [1] and hr.decode_capture_sizes(30, False)[-1] == 30


def test_unified_memory_counts_the_host_only_where_its_guard_acts_on_available_memory():
    """On GB10 the engine reads the host's available memory, so what the host holds at the baseline is out of P; the
    stock host swaps the server's later host growth out, an earlyoom host keeps it and its own threshold in memory."""
    cmd = (LAUNCH + "--model-path RadixArk/Qwen3.8-27B-NVFP4 --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.8"
           " --attention-backend flashinfer --chunked-prefill-size 2048")
    stock, _ = timeline(cmd, "dgx-spark")
    guarded, _ = timeline(cmd, "dgx-spark", constants=constants_for("dgx-spark", "earlyoom"))
    discrete, _ = timeline(cmd, "rtx-pro-6000")
    assert not {"host_reserve", "host_runtime"} & set(parts(stock)) and not {"host_reserve"} & set(parts(discrete))
    reserve, runtime = parts(guarded)["host_reserve"], parts(guarded)["host_runtime"]
    assert reserve.nbytes == int(0.10 * lookup("dgx-spark").memory_bytes) and "earlyoom" in reserve.note
    assert runtime.nbytes == int(3.5 * (1 << 30)) and "v0.5.19" in runtime.note
    assert guarded.headroom_gib.value - stock.headroom_gib.value == pytest.approx(12.169 + 3.5, abs=0.01)
    # the verified 0.80 fits on both hosts; the stock host goes much higher, the earlyoom host stops near 0.84
    assert stock.slack_fits_headroom and guarded.slack_fits_headroom
    assert stock.max_safe_mem_fraction.value > 0.97 and 0.83 < guarded.max_safe_mem_fraction.value < 0.85


def test_rtx4090_boot_log_cross_check():
    """What the real TP2 boot log shows outside the pools before serving: pool end -> capture end (backend init and
    decode graphs bs 1..24, no prefill graph) against the same parts of the estimate on the log's own A and P."""
    log = (FIXTURES / "logs" / "qwen3.5-9b-tp2-rtx4090.log").read_text()
    pool_end = float(re.search(r"TP0\] Memory pool end\. avail mem=([\d.]+) GB", log).group(1))
    capture_end = float(re.search(r"TP0\] Capture cuda graph end.*avail mem=([\d.]+) GB", log).group(1))
    tl, _ = timeline(LAUNCH + "--model-path Qwen/Qwen3.5-9B --tp-size 2 --mem-fraction-static 0.8 --context-length "
                     "262144 --cuda-graph-max-bs-decode 24 --disable-prefill-cuda-graph", "rtx4090",
                     available_gib=14.08, pre_load_gib=22.93)
    p = parts(tl)
    before_serving = sum(p[k].nbytes for k in ("attention_workspace", "cublas_workspace", "decode_graph_buffers",
                                               "graph_pool", "graph_shapes", "nccl")) / GIB
    assert pool_end - capture_end == pytest.approx(0.70)
    assert before_serving == pytest.approx(pool_end - capture_end, abs=0.15)
    assert tl.slack_fits_headroom  # the server came up and served


COMMANDS = (H200_RECIPE, RTX5090_CELL)


@settings(max_examples=25, deadline=None)
@given(which=st.sampled_from(COMMANDS), chunk=st.sampled_from([1024, 2048, 4096, 8192, 16384]),
       bs=st.integers(1, 64), mfs=st.floats(0.6, 0.95))
def test_more_tokens_in_flight_never_need_less_and_the_breakdown_adds_up(which, chunk, bs, mfs):
    gpu = "h200" if which is H200_RECIPE else "rtx5090"
    base = (which.replace("--chunked-prefill-size 32768 --max-prefill-tokens 32768", "")
            .replace("--mem-fraction-static 0.85", "").replace("--mem-fraction-static 0.9", "")
            .replace("--cuda-graph-max-bs-decode 1", ""))
    cmd = f"{base} --mem-fraction-static {mfs:.3f} --cuda-graph-max-bs-decode {bs}"
    small, _ = timeline(f"{cmd} --chunked-prefill-size {chunk}", gpu)
    big, _ = timeline(f"{cmd} --chunked-prefill-size {chunk * 2}", gpu)
    assert big.headroom_gib.value >= small.headroom_gib.value
    d = explain(f"{cmd} --chunked-prefill-size {chunk}", gpu=lookup(gpu))
    if "error" in d:
        return
    b = d["memory"]["breakdown"]
    tl = d["memory"]["timeline"]
    # what is left is the slack less what it must hold, and the parts fill the card
    assert b["free_gib"] == pytest.approx(tl["slack_gib"]["value"] - tl["slack_need_gib"]["value"], abs=1e-6)
    total = sum(v for k, v in b.items() if k.endswith("_gib") and k != "capacity_gib")
    assert total == pytest.approx(b["capacity_gib"])
    assert b["cuda_graphs_activations_gib"] == pytest.approx(sum(p["gib"] for p in tl["headroom_parts"]))
