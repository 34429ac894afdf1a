"""planner.evidence: the fraction ceiling and the confidence from measured launches (the pages' records, boot logs)."""

from __future__ import annotations

import pytest

from hybridplan.calibration.sources import all_evidence
from hybridplan.hardware.catalog import lookup
from hybridplan.engine.sglang.serving.loading import load
from hybridplan import evidence as ev

SEED = ("--model-path RadixArk/Qwen3.8-27B-NVFP4 --speculative-algorithm DFLASH --speculative-draft-model-path "
        "incoai/Qwen3.8-27B-DFlash2 --max-running-requests 1 --mamba-ssm-dtype bfloat16")
SOURCE = all_evidence


def probe(command: str, gpu: str, concurrency: int, version: str | None = None) -> tuple[ev.Probe, float]:
    """The command's probe on the card and the engine's default fraction for it."""
    card = lookup(gpu)
    args = load(command, platform=card.platform(), version=version).args
    return ev.Probe.of(args, card, concurrency), args["mem_fraction_static"]


def test_the_seed_target_is_capped_two_steps_below_the_recorded_bf16_first_request_oom():
    """The page's bf16 DFlash record ran out of memory on its first request at 0.90 (chunk 4096): the ceiling is
    0.88, the page's own serving setting, although the model's estimate and the no-evidence rule allow 0.90."""
    p, default = probe(SEED, "rtx5090", 1)
    b = ev.fraction_bound(p, default, SOURCE("sglang", lookup("rtx5090"), "0.5.23"))
    assert default == pytest.approx(0.7213, abs=1e-4) and b.no_evidence_ceiling == 0.9
    assert b.ceiling == 0.88 and b.cap is not None and b.cap.point.label.endswith("dflash-bf16-first-request-oom")
    assert b.support is not None and b.support.fraction > b.ceiling  # a measured cell supports more: the cap wins


def test_no_comparable_launch_keeps_the_no_evidence_ceiling():
    """The H100 has only a Qwen3-235B TP4 boot with no chunk or cap printed: not comparable, so Qwen3.8-27B-FP8
    stays within max(default + 0.05, 0.90)."""
    cmd = "--model-path Qwen/Qwen3.8-27B-FP8"
    p, default = probe(cmd, "h100-80gb", 103)
    points = SOURCE("sglang", lookup("h100-80gb"), "0.5.23")
    assert {x.label for x in points} == {"vllm-21348-qwen3-235b-fp8-4xh100"}  # vLLM's own launches: not for sglang
    b = ev.fraction_bound(p, default, points)
    assert b.support is None and b.cap is None
    assert b.ceiling == round(max(default + ev.NO_EVIDENCE_STEP, ev.NO_EVIDENCE_FLOOR), 3) == 0.9
    c = ev.confidence(ev.Probe.of(load(cmd + " --mem-fraction-static 0.9", platform=lookup("h100-80gb").platform())
                                  .args, lookup("h100-80gb"), 103), points)
    assert c.level == "extrapolated" and c.distance is not None and c.distance > ev.MAX_DISTANCE


def test_the_pages_measured_h200_cells_are_evidence_below_the_no_evidence_ceiling():
    """The page measured Qwen3.8-27B-FP8 on the H200 at 0.85 (its cells' measurements): comparable evidence, but it
    supports less than max(default + 0.05, 0.90), so the ceiling stays there and 0.9 is extrapolated above it."""
    cmd = "--model-path Qwen/Qwen3.8-27B-FP8"
    p, default = probe(cmd, "h200", 103)
    points = SOURCE("sglang", lookup("h200"), "0.5.23")
    b = ev.fraction_bound(p, default, points)
    assert b.support is None and b.cap is None and b.ceiling == 0.9
    assert b.evidence and b.evidence[0].point.label.startswith("qwen3.8-27b:h200 x default x fp8")
    c = ev.confidence(ev.Probe.of(load(cmd + " --mem-fraction-static 0.9", platform=lookup("h200").platform()).args,
                                  lookup("h200"), 103), points)
    assert c.level == "extrapolated" and c.distance is not None and c.distance <= ev.MAX_DISTANCE
    assert c.basis[0].startswith("page record qwen3.8-27b:h200 x default x fp8")


def test_distance_terms_and_card_class():
    p, _ = probe("--model-path Qwen/Qwen3.8-27B-FP8 --chunked-prefill-size 32768", "h200", 64)
    near = ev.EvidencePoint(engine="sglang", kind="boot log", label="x", source="s", gpu="h100-80gb", model=p.model, outcome="served",
                            phase=None, mem_fraction_static=0.9, chunked_prefill_size=8192, max_running_requests=64,
                            tp=1)
    d = ev.distance(near, p)
    assert d is not None and d.value == pytest.approx(ev.CLASS + 2.0)  # another Hopper card, chunk 4x the measured
    assert ev.distance(near, ev.Probe.of(p_args := load("--model-path Qwen/Qwen3.8-27B-FP8", platform=lookup(
        "h100-80gb").platform()).args, lookup("h100-80gb"), 64)) is not None
    bigger = ev.EvidencePoint(**{**near.as_dict(), "gpu": "h200"})
    assert ev.distance(bigger, ev.Probe.of(p_args, lookup("h100-80gb"), 64)) is None  # more memory: no transfer
    assert ev.distance(near, ev.Probe.of(p_args, lookup("rtx5090"), 64)) is None  # another architecture


def test_a_launch_of_this_command_is_measured():
    cmd = ("--trust-remote-code --model-path RadixArk/Qwen3.8-27B-NVFP4 --kv-cache-dtype fp8_e4m3 --attention-backend "
           "flashinfer --max-running-requests 1 --cuda-graph-max-bs-decode 1 --speculative-algorithm DFLASH "
           "--speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2 --speculative-num-draft-tokens 8 "
           "--mamba-radix-cache-strategy extra_buffer_lazy --mamba-ssm-dtype float32 --mem-fraction-static 0.895 "
           "--mamba-full-memory-ratio 10")
    card = lookup("rtx5090")
    points = SOURCE("sglang", card, "0.5.23")
    built = next(p.version for p in points if p.label.endswith("dflash-fp32-ht-pin"))
    assert built is not None
    c = ev.confidence(probe(cmd, "rtx5090", 1, built)[0], points)
    assert c.level == "measured" and "dflash-fp32-ht-pin" in c.note
    # the same command modelled under another release is not the launch that ran: inside its evidence, no more
    assert ev.confidence(probe(cmd, "rtx5090", 1, "0.5.18")[0], points).level == "calibrated"
    lower = ev.confidence(probe(cmd.replace("0.895", "0.87"), "rtx5090", 1, built)[0], points)
    assert lower.level == "calibrated" and lower.margin == pytest.approx(0.025)


def test_an_int4_export_is_another_model_than_the_checkpoint_it_was_made_from():
    """The club-3090 AutoRound INT4 launches run `--model-path <bf16 id> --quantization auto-round`: their fraction
    evidence is the INT4 export's (weights a third of the bf16 ones), not the bf16 checkpoint's. A boot log's key
    reads the same from its command: the quantization and the MTP draft (its local path is the model's)."""
    bf16, _ = probe("--model-path Qwen/Qwen3.8-27B", "rtx3090", 1)
    int4, _ = probe("--model-path Qwen/Qwen3.8-27B --quantization auto-round", "rtx3090", 1)
    assert int4.model == "Qwen/Qwen3.8-27B + --quantization auto-round" and bf16.model == "Qwen/Qwen3.8-27B"
    points = {p.label: p for p in SOURCE("sglang", lookup("rtx3090"), "0.5.23")}
    served = points["club3090-single-int4-nomtp-mf088"]
    near, far = ev.distance(served, int4), ev.distance(served, bf16)
    assert near is not None and far is not None
    assert not any(t.startswith("another model") for t in near.terms)
    assert any(t.startswith("another model") for t in far.terms) and far.value == near.value + ev.OTHER_MODEL
    assert points["club3090-qwen38-27b-int4-tp2-rtx3090-k63"].model == \
        "Qwen/Qwen3.8-27B + --quantization auto-round + EAGLE + Qwen/Qwen3.8-27B"
    assert points["club3090-qwen38-27b-fp8-tp2-rtx3090-mf092"].model == \
        "Qwen/Qwen3.8-27B-FP8 + EAGLE + Qwen/Qwen3.8-27B-FP8"  # --quantization fp8 names the FP8 checkpoint's bytes
