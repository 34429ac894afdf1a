"""The headroom estimate against the docs cookbook's measured facts (reference/cookbook-semantics.md §5.1, §6.1, §7):
every verified pin fits on its card, the recorded out-of-memory failures do not; the misses are marked as such."""

from __future__ import annotations

from functools import lru_cache

import pytest

from hybridplan.cookbook.engine_view import launch_command
from hybridplan.cookbook.fit import request_tokens
from hybridplan.cookbook.matrix import matrix
from hybridplan.cookbook.pages import load_page
from hybridplan.cookbook.render import render
from hybridplan.engine.versions import engine_module
from hybridplan.loading import load
from hybridplan.hardware.catalog import lookup
from hybridplan.planner.plan import Planner, Target, candidates
from hybridplan.planner.timeline import for_loaded

BASE = ("python -m sglang.launch_server --trust-remote-code --model-path RadixArk/Qwen3.8-27B-NVFP4 --kv-cache-dtype "
        "fp8_e4m3 --attention-backend flashinfer --max-running-requests 1 --cuda-graph-max-bs-decode 1 ")
DSPARK = ("--speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark "
          "--speculative-draft-attention-backend flashinfer ")
DFLASH = ("--speculative-algorithm DFLASH --speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2 "
          "--speculative-num-draft-tokens 8 --mamba-ssm-dtype float32 --mamba-full-memory-ratio 10 ")
EAGLE = ("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
         "--speculative-num-draft-tokens 4 --enable-linear-replayssm-spec ")
CELL_FLAGS = ("--kv-cache-dtype", "fp8_e4m3", "--attention-backend", "flashinfer", "--max-running-requests", "1",
              "--cuda-graph-max-bs-decode", "1")


@lru_cache(maxsize=1)
def measured_selections() -> list[dict]:
    page = load_page("qwen3.8-27b")
    gpus = {h.id: h.gpu for h in page.hardware}
    out = []
    for s in matrix(page)["selections"]:
        if s["badge"] in ("verified", "in-progress"):
            out.append({"label": " ".join(s["selection"][d] for d in ("hw", "quant", "spec", "tier", "ssm-dtype")),
                        "gpu": gpus[s["selection"]["hw"]], "flags": s["flags"], "env": s["env"],
                        "tokens": request_tokens(page, render(page, s["selection"]))})
    return out


def on(command: str, gpu: str = "rtx5090"):
    card = lookup(gpu)
    loaded = load(command, platform=card.platform())
    return for_loaded(loaded, gpu=card)[0], loaded


def test_every_measured_pin_fits_its_card():
    sels = measured_selections()
    assert len(sels) > 200 and {s["gpu"] for s in sels} == {"h200", "rtx-pro-6000", "rtx5090", "dgx-spark", "gb300"}
    misjudged = []
    for s in sels:
        card = lookup(s["gpu"])
        loaded = load(launch_command(s["flags"], s["env"], {}), platform=card.platform())
        tl, _ = for_loaded(loaded, gpu=card)
        sizing = engine_module(loaded.version).size_pools(tl.budget, loaded.args, loaded.geometry, loaded.draft)
        if not tl.slack_fits_headroom or sizing.max_total_num_tokens < s["tokens"] or sizing.max_running_requests < 1:
            misjudged.append((s["label"], round(tl.slack_gib.value, 2), round(tl.slack_need_gib.value, 2)))
    assert misjudged == []


def test_dspark_with_an_8192_chunk_runs_out_on_the_first_prefill():
    # measured: DSpark at 0.9 with an 8192-token chunk OOMs on the first prefill (75 MB free); the pin is 0.89 at 4096
    failed, _ = on(BASE + DSPARK + "--mamba-ssm-dtype float32 --mem-fraction-static 0.9 --chunked-prefill-size 8192")
    pinned, _ = on(BASE + DSPARK + "--mamba-ssm-dtype float32 --mem-fraction-static 0.89")
    assert not failed.slack_fits_headroom and pinned.slack_fits_headroom


def test_dflash_fp32_above_its_pin_runs_out_capturing_graphs():
    # measured: fp32 + DFLASH2 OOMs in "Capture target prefill CUDA graph" at 0.945 (and 0.92); the pin is 0.895
    failed, _ = on(BASE + DFLASH + "--mamba-radix-cache-strategy extra_buffer_lazy --mem-fraction-static 0.945")
    pinned, _ = on(BASE + DFLASH + "--mamba-radix-cache-strategy extra_buffer_lazy --mem-fraction-static 0.895")
    assert not failed.slack_fits_headroom and pinned.slack_fits_headroom


def test_dspark_wants_the_fraction_down_and_eagle_up():
    # the page's pin comments: EAGLE starves the state pool (wants it up), DSpark starves activations (wants it down)
    dspark, _ = on(BASE + DSPARK + "--mem-fraction-static 0.89")
    eagle, _ = on(BASE + EAGLE + "--mem-fraction-static 0.94")
    assert dspark.max_safe_mem_fraction.value < eagle.max_safe_mem_fraction.value


def test_bf16_weights_leave_nothing_on_the_rtx5090():
    t = Target(model="Qwen/Qwen3.8-27B", quant="bf16", gpu=lookup("rtx5090"), request_length=9216, concurrency=1,
               extra_flags=CELL_FLAGS)
    o = Planner(t).evaluate(candidates(t, 1)[0])
    assert not o.fits and "exceed" in o.reason


@pytest.mark.xfail(strict=True, reason="known miss: measured OOM capturing the prefill graph at 0.92; the estimate "
                                       "leaves ~0.6 GiB of slack there")
def test_dflash_fp32_at_0_92_runs_out_capturing_graphs():
    failed, _ = on(BASE + DFLASH + "--mamba-radix-cache-strategy extra_buffer_lazy --mem-fraction-static 0.92")
    assert not failed.slack_fits_headroom


@pytest.mark.xfail(strict=True, reason="known miss: the page greys fp32 out here ('no fp32 GDN state pool that also "
                                       "leaves room for prefill graph capture'); the planner still finds a fraction "
                                       "that holds both, the dense-head checkpoint's runtime weights (+3.2 GB "
                                       "measured, +1.7 GiB estimated) being one gap")
@pytest.mark.parametrize("quant, spec, tier", [("nvfp4-bf16-head", "dflash", "extra_buffer_lazy"),
                                               ("nvfp4-bf16-head", "dspark", "extra_buffer"),
                                               ("nvfp4", "dflash", "extra_buffer")])
def test_greyed_fp32_combinations_do_not_fit(quant, spec, tier):
    t = Target(model="Qwen/Qwen3.8-27B", quant=quant, gpu=lookup("rtx5090"), request_length=9216, concurrency=1,
               spec=spec, extra_flags=CELL_FLAGS + ("--mamba-radix-cache-strategy", tier, "--mamba-ssm-dtype", "float32"))
    assert not Planner(t).evaluate(candidates(t, 1)[0]).fits


@pytest.mark.xfail(strict=True, reason="known miss: measured negative total_rest_memory at every fraction; the FP8 "
                                       "weights (28.3 GiB estimated) and the 0.75 GiB context leave 2.8 GiB here")
def test_fp8_weights_leave_nothing_on_the_rtx5090():
    t = Target(model="Qwen/Qwen3.8-27B", quant="fp8", gpu=lookup("rtx5090"), request_length=9216, concurrency=1,
               extra_flags=CELL_FLAGS)
    assert not Planner(t).evaluate(candidates(t, 1)[0]).fits
