"""The memory timeline against the qwen3.8-27b page's measured facts (reference/cookbook-semantics.md §5.1, §6.1 and
the page's `records`): every verified pin serves on its card, every recorded failure fails in its phase, and the
planner finds nothing where the page records that nothing fits."""

from __future__ import annotations

from functools import lru_cache

import pytest

from hybridplan.cookbook.engine_view import launch_command
from hybridplan.cookbook.fit import request_tokens
from hybridplan.cookbook.matrix import matrix
from hybridplan.cookbook.pages import load_page
from hybridplan.cookbook.record_checks import check
from hybridplan.cookbook.render import render
from hybridplan.hardware.catalog import lookup
from hybridplan.engine.sglang.serving.loading import load
from hybridplan.engine.search import candidates
from hybridplan.engine.sglang.serving.plan import Planner, Target
from hybridplan.engine.sglang.serving.timeline import for_loaded
from hybridplan.engine.sglang.serving.verdict import predict

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
                        "version": page.engine_version,
                        "tokens": request_tokens(page, render(page, s["selection"]))})
    return out


def test_every_measured_pin_serves_on_its_card():
    sels = measured_selections()
    assert len(sels) > 200 and {s["gpu"] for s in sels} == {"h200", "rtx-pro-6000", "rtx5090", "dgx-spark", "gb300"}
    misjudged = []
    for s in sels:
        card = lookup(s["gpu"])
        loaded = load(launch_command(s["flags"], s["env"], {}), platform=card.platform(), version=s["version"])
        tl, _ = for_loaded(loaded, gpu=card)
        v = predict(loaded, tl, request_tokens=s["tokens"])
        if not v.serves:
            misjudged.append((s["label"], v.phase, v.why))
    assert misjudged == []


@lru_cache(maxsize=1)
def record_checks():
    page = load_page("qwen3.8-27b")
    gpus = {h.id: h.gpu for h in page.hardware}
    return [c for r in page.records for c in check(r, gpus[r.hw], page.engine_version)]


def test_the_page_records_failures_and_pins_on_the_rtx5090():
    checks = record_checks()
    served = [c for c in checks if c.record.outcome == "served"]
    failed = [c for c in checks if c.record.outcome == "failed"]
    assert len(served) == 3 and len(failed) == 12
    assert {c.record.phase for c in failed} == {"cuda_graph", "first_request", "state_pool", "kv_pool"}


@pytest.mark.parametrize("label", [c.label for c in record_checks()])
def test_the_model_agrees_with_each_record(label):
    c = next(c for c in record_checks() if c.label == label)
    assert c.agrees, c.message()


def test_dflash_fp32_at_0_92_runs_out_capturing_graphs():
    # measured: OOM in "Capture target prefill CUDA graph" at 0.92 and 0.945; the pin 0.895 serves
    v = {c.label: c.verdict for c in record_checks()}
    assert v["dflash-fp32-ht-capture-oom@0.92"].phase == "cuda_graph"
    oom = v["dflash-fp32-ht-capture-oom@0.92"]
    assert oom.figure("slack_gib") < oom.figure("capture_need_gib")
    assert v["dflash-fp32-ht-pin"].serves


def test_dspark_wants_the_fraction_down_and_eagle_up():
    # the page's pin comments: EAGLE starves the state pool (wants it up), DSpark starves activations (wants it down)
    base = ("python -m sglang.launch_server --model-path RadixArk/Qwen3.8-27B-NVFP4 " + " ".join(CELL_FLAGS))
    card = lookup("rtx5090")
    dspark, _ = for_loaded(load(base + " --speculative-algorithm DSPARK --speculative-draft-model-path "
                                "RadixArk/Qwen3.8-27B-DSpark --mem-fraction-static 0.89", platform=card.platform()),
                           gpu=card)
    eagle, _ = for_loaded(load(base + " --speculative-algorithm EAGLE --speculative-num-steps 3 "
                               "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4 "
                               "--enable-linear-replayssm-spec --mem-fraction-static 0.94", platform=card.platform()),
                          gpu=card)
    assert dspark.max_safe_mem_fraction.value < eagle.max_safe_mem_fraction.value


def _target(quant: str, spec: str | None = None, *extra: str) -> Target:
    return Target(model="Qwen/Qwen3.8-27B", quant=quant, gpu=lookup("rtx5090"), request_length=9216, concurrency=1,
                  spec=spec, extra_flags=CELL_FLAGS + extra)


@pytest.mark.parametrize("quant", ["bf16", "fp8"])
def test_bf16_and_fp8_weights_leave_nothing_on_the_rtx5090(quant):
    # the page: "the BF16 (~54 GB) and FP8 (~28.5 GB) checkpoints leave no memory for the pools (FP8 measured:
    # negative total_rest_memory at every mem fraction)"
    t = _target(quant)
    assert not Planner(t).evaluate(candidates([])[0]).fits


@pytest.mark.parametrize("quant, spec, tier", [("nvfp4-bf16-head", "dflash", "extra_buffer_lazy"),
                                               ("nvfp4-bf16-head", "dspark", "extra_buffer"),
                                               ("nvfp4", "dflash", "extra_buffer")])
def test_greyed_fp32_combinations_do_not_fit(quant, spec, tier):
    # the page greys these out: "no fp32 GDN state pool that also leaves room for prefill graph capture"
    t = _target(quant, spec, "--mamba-radix-cache-strategy", tier, "--mamba-ssm-dtype", "float32")
    assert not Planner(t).evaluate(candidates([])[0]).fits
