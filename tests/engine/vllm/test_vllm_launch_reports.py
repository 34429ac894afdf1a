"""Public vLLM launches (data/vllm_launch_reports.yaml) against `explain --engine vllm`: each is called right (served
as reported, or refused at the reported check with vLLM's message) or its report says why not, a failed launch
predicted to serve is named in its report (and counted in docs/vllm-calibration.md), and every number vLLM printed for
a launch (the Mamba block count of a refusal, the KV a refusal needed and the length it would fit, the capacity of a
boot that served, the memory the free-memory check asked for) is the model's number or the report says why not. The
refusal messages of the public logs are the ones engine/vllm/startup.py writes for the same numbers."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.conftest import benchmark_module

import pytest

from hybridplan.calibration.launch_reports import load
from hybridplan.engine.vllm import startup
from hybridplan.hardware.catalog import lookup

ROOT = Path(__file__).resolve().parents[3]
REPORTS = load("vllm")
GIB = 1 << 30



LAUNCHES = {x.report.id: x for x in benchmark_module("vllm_calibration_table").launches()}


def test_the_launches_are_public_varied_and_new():
    """At least 15 launches beyond the boot-log table, each with a link, on several cards, served and refused at
    each kind of check."""
    new = [r for r in REPORTS if "benchmarks/vllm_boot_logs.yaml" not in r.note]
    assert len(new) >= 15 and all(r.engine == "vllm" for r in REPORTS)
    assert all(r.url.startswith("https://github.com/") and r.source for r in REPORTS)
    assert len({r.gpu for r in REPORTS}) >= 5
    assert {r.phase for r in REPORTS} >= {None, "free_memory", "kv_cache", "cuda_graph"}
    assert sum("num_blocks" in r.logged for r in REPORTS) >= 8  # refusals that print their block count


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]+", text)) - {"ValueError", "RuntimeError"}


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:\.\d+)?", text))


@pytest.mark.parametrize("rid", [r.id for r in REPORTS])
def test_every_launch_is_called_right_or_its_report_says_why(rid):
    """The verdict serves as reported or stops at the reported check; every printed number is the model's; where
    either misses, the report names why, and a reason the model no longer needs fails the test (stale)."""
    x = LAUNCHES[rid]
    r, v = x.report, x.verdict
    assert not x.unexplained, (x.called, {f: (r.logged.get(f), x.model.get(f)) for f in x.unexplained})
    assert not x.stale, x.stale
    if x.unsafe:  # a failed launch predicted to serve: only where its report says why
        assert "outcome" in r.differs
    if r.message and x.agrees and not v["serves"] and "message" not in r.differs:
        # vLLM's words as the report quotes them, and its numbers where every printed figure reproduces
        assert _words(r.message) <= _words(v["message"]), (r.message, v["message"])
        if not set(r.differs) & set(r.logged):
            assert _numbers(r.message) <= _numbers(v["message"]), (r.message, v["message"])


def test_the_verdicts_tally():
    """Most launches are called right; the misses are the few the reports explain, and the only failed launches
    predicted to serve are the two RTX PRO 6000 recipe boots whose build keeps 7-9 GiB the model does not see."""
    agree = [x for x in LAUNCHES.values() if x.agrees]
    assert len(agree) >= len(LAUNCHES) - 3
    assert sorted(x.report.id for x in LAUNCHES.values() if x.unsafe) == [
        "recipes831-rtxpro6000-qwen38-27b-fp8", "recipes831-rtxpro6000-qwen38-27b-nvfp4"]


def test_every_public_gb10_launch_is_called_on_the_host_growth_its_pool_survives():
    """The DGX Spark launches (a unified card, where vLLM takes the host's growth during startup from the KV memory):
    the refused 131,072-token driver survives 1.25 GiB of it (318 card-alone blocks for 256 sequences), less than the
    4.43 GiB the InstantTensor loader alone took on a GB10, so it fails at the Mamba-block check with the 96 blocks
    that growth leaves (vLLM logged 95: the card-alone 6.37 GiB less its 95 blocks is 4.45-4.47 GiB of growth); the
    served ones survive 6.71 (65,536 tokens, 32 sequences) and 8.55 GiB (32,768 at 0.42) and serve; the coder refused
    for free memory is already refused by the Mamba-block check. Each names the evidence in its why and confidence."""
    spark = {rid: x for rid, x in LAUNCHES.items() if x.report.gpu == "dgx-spark"}
    called = {rid: (x.called, x.verdict["host_growth_tolerated_gib"]) for rid, x in spark.items()}
    assert called == {"rwlove13226-spark-qwen36-35b-a3b-fp8-131072": ("fails (cuda_graph)", 1.25),
                      "rwlove13226-spark-qwen36-35b-a3b-fp8-65536-seqs32": ("serves", 6.71),
                      "rwlove13219-spark-qwen36-35b-a3b-fp8-u042": ("serves", 8.55),
                      "rwlove13221-spark-qwen36-27b-fp8-u035": ("fails (cuda_graph)", -1.79)}
    assert all(not x.unsafe for x in spark.values())
    refused = spark["rwlove13226-spark-qwen36-35b-a3b-fp8-131072"].verdict
    assert refused["message"].startswith("max_num_seqs (256) exceeds available Mamba cache blocks (96).")
    assert "only while the host grows by less than 1.25 GiB during startup" in refused["why"]
    served = spark["rwlove13226-spark-qwen36-35b-a3b-fp8-65536-seqs32"].verdict
    assert "holds while the host grows by less than 6.71 GiB during startup" in served["why"]
    evidence = "https://github.com/MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks/issues/204"
    for v in (refused, served):
        assert "MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks#204" in v["why"]
        assert any(evidence in b for b in v["confidence"]["basis"]) and "4.43 GiB" in v["confidence"]["note"]
    # the growth vLLM's own count implies for the refused launch: the card-alone memory less its 95 blocks
    bpb = 21_463_040
    gap = refused["available_kv_gib"] - 95 * bpb / GIB
    assert 4.43 < gap < 4.5 and refused["host_growth_tolerated_gib"] < gap


@pytest.mark.parametrize("rid, version, gpu, kv, count", [
    ("grigoriy-l40s-qwen38-fp8-u090", "0.24.0", "l40s", "8.82", 184),
    ("recipes551-h100-qwen36-27b-fp8-u095", "0.24.0", "h100-80gb", None, 859),
    ("grazdev-rtxpro6000-qwen38-27b-u090", "0.24.0", "rtx-pro-6000", None, 601),
])
def test_explain_says_a_public_refusal_fails_at_startup_with_vllms_message_and_the_block_count(cli_json, rid, version,
                                                                                             gpu, kv, count):
    """The CLI on the card, release and command of a public Mamba-block refusal: exit 3, fails at cuda_graph with
    vLLM's message and block count (the logged count exactly where the log prints the memory; from the card alone
    within the few blocks the estimate leaves)."""
    r = next(r for r in REPORTS if r.id == rid)
    sizing = ["--kv-memory-gib", kv] if kv else []
    code, out = cli_json("explain", "--json", "--engine", "vllm", "--gpu", gpu, *sizing, "--engine-version", version,
                         "--", *shlex.split(r.command))
    v = out["verdict"]
    assert code == 3 and not v["serves"] and v["phase"] == "cuda_graph" and v["num_blocks"] == count
    assert v["message"].startswith(f"max_num_seqs ({int(r.logged['max_num_seqs'])}) exceeds available Mamba cache "
                                   f"blocks ({count}). Each decode sequence requires one Mamba cache block")
    assert abs(count - int(r.logged["num_blocks"])) <= 3 and v["rule"] == startup.MAMBA_BLOCKS_RULE


def test_a_refusal_with_its_logged_memory_reproduces_its_block_count_and_its_kv_numbers():
    """Where the log prints the available KV memory, the model's plan is vLLM's: the L40S boot at 0.90 plans the 184
    Mamba blocks its refusal names (256 default sequences on a 48 GB card), the one at 0.86 the 8.18 GiB and the
    112,896-token estimate of its KV refusal, and the dual-3090 boot the 612,157 tokens it logged."""
    u090, u086, dual = (LAUNCHES[k] for k in ("grigoriy-l40s-qwen38-fp8-u090", "grigoriy-l40s-qwen38-fp8-u086",
                                              "club3090-487-2x3090-qwen36-27b-int4-mtp"))
    assert u090.model["num_blocks"] == ("184",) and u090.model["max_num_seqs"] == ("256",)
    assert u086.model["needed_kv_gib"] == ("8.18",) and u086.model["estimated_max_model_len"] == ("112896",)
    assert u086.verdict["phase"] == "kv_cache" and u086.verdict["message"].startswith(
        "To serve at least one request with the model's max seq len (131072), (8.18 GiB KV cache is needed")
    assert "612157" in dual.model["kv_cache_tokens"] and "2.34" in dual.model["max_concurrency"]


def test_the_card_alone_lands_near_the_block_counts_it_can_know():
    """Without a logged memory line the card-alone estimate is within a few blocks of vLLM's count where the launch is
    the one the report shows (H100 at 0.95: 859 for 856; RTX PRO 6000 at 0.90: 601 for 603)."""
    for rid, logged in (("recipes551-h100-qwen36-27b-fp8-u095", 856), ("grazdev-rtxpro6000-qwen38-27b-u090", 603)):
        (blocks,) = LAUNCHES[rid].model["num_blocks"]
        assert abs(int(blocks) - logged) <= 3, rid


def _fragments(text: str) -> list[str]:
    """The parts of a message a report quotes (it may elide with '...'), without the exception type."""
    return [f.strip(" .") for f in re.sub(r"^\w+Error: ", "", text).split("...") if f.strip(" .")]


@pytest.mark.parametrize("rid", [r.id for r in REPORTS if {"num_blocks", "max_num_seqs"} <= set(r.logged)])
def test_vllms_mamba_block_message_is_the_startup_rules(rid):
    """vLLM's Mamba-block refusal as the public logs print it is the one startup.check_mamba_blocks writes for the
    logged numbers under full CUDA graphs (the hybrid default), and none under piecewise graphs or --enforce-eager."""
    r = next(r for r in REPORTS if r.id == rid)
    seqs, blocks = int(r.logged["max_num_seqs"]), int(r.logged["num_blocks"])
    refusal = startup.check_mamba_blocks(seqs, blocks, "FULL_AND_PIECEWISE")
    assert refusal is not None and refusal.rule == startup.MAMBA_BLOCKS_RULE
    assert all(f in refusal.message for f in _fragments(r.message)), (r.message, refusal.message)
    assert startup.check_mamba_blocks(seqs, blocks, "PIECEWISE") is None
    assert startup.check_mamba_blocks(seqs, blocks, "NONE") is None
    assert startup.check_mamba_blocks(blocks, blocks, "FULL_AND_PIECEWISE") is None


def test_the_free_memory_refusal_asks_what_vllm_asked():
    """The DGX Spark coder asked ceil(0.35 x 121.63 GiB) = 42.57 GiB with 38.74 GiB free: startup.check_free_memory
    refuses with those numbers; the 2x RTX 5090 boot asked 28.88 of 31.4 with 30.27 free and passed."""
    spark = next(r for r in REPORTS if r.id == "rwlove13221-spark-qwen36-27b-fp8-u035")
    total, free = spark.logged["total_gib"] * GIB, spark.logged["free_gib"] * GIB
    refusal = startup.check_free_memory(int(free), int(total), 0.35, int(spark.logged["requested_gib"] * GIB))
    assert refusal is not None and "(38.74/121.63 GiB)" in refusal.message and "(0.35, 42.57 GiB)" in refusal.message
    duo = next(r for r in REPORTS if r.id == "club3090-1087-2x5090-qwen38-27b-fp8-mtp")
    assert startup.check_free_memory(int(duo.logged["free_gib"] * GIB), int(duo.logged["total_gib"] * GIB), 0.92,
                                     int(duo.logged["requested_gib"] * GIB)) is None
    # what vLLM saw of the GB10 is the catalog's torch total, to the log's 0.01 GiB (a 0.06 GiB reserve apart)
    assert abs(lookup("dgx-spark").memory_mib / 1024 - spark.logged["total_gib"]) < 0.1


def test_every_boot_log_row_is_called_as_its_boot_went():
    """The boots of benchmarks/vllm_boot_logs.yaml, with their logged memory: each serves under the verdict, except
    the one whose boot went on to refuse (the L40S at 0.90, a launch report above), which fails where vLLM did."""
    import yaml

    from hybridplan.engine.vllm.serving.explain import explain_vllm

    refused = {(r.command, r.gpu, r.logged.get("available_kv_gib")): r.phase for r in REPORTS if r.outcome == "failed"}
    logs = yaml.safe_load((ROOT / "benchmarks" / "vllm_boot_logs.yaml").read_text())["logs"]
    called = {}
    for log in logs:
        v = explain_vllm(log["command"], version=log["model_release"], kv_memory_gib=log["available_kv_gib"],
                         gpu=log["gpu"])["verdict"]
        called[log["source"]] = v["phase"]
        assert v["phase"] == refused.get((log["command"], log["gpu"], log["available_kv_gib"])), log["source"]
    assert len(called) >= 15 and list(called.values()).count("cuda_graph") == 1


def test_a_launch_is_checked_under_its_own_release_once_that_is_modelled():
    """A report whose log names a release checks it under that release as soon as hybridplan models it; until then
    under the nearest modelled one, its `logged_version` saying which it ran (v0.25.1, v0.26.0, v0.27.1, 0.28.0 today)."""
    from hybridplan.engine.api import releases

    named = {r.id: (m.group(1), r.version) for r in REPORTS
             if (m := re.match(r"v?(\d+\.\d+\.\d+)(?:\s|$)", r.logged_version))}
    assert len(named) >= 8
    stale = {rid: v for rid, (v, modelled) in named.items() if v in releases("vllm") and v != modelled}
    assert not stale, f"model these under their own release now: {stale}"


@pytest.mark.parametrize("rid", [r.id for r in REPORTS if "+" not in r.command and r.gpu_count == 1])
def test_a_verdict_names_the_public_launch_it_rests_on(rid):
    """explain --engine vllm --gpu on a report's own card, release and command (the card-alone estimate) is
    "measured": the report is this launch, and the confidence cites it by link; under another release it is not."""
    from hybridplan import explain

    r = next(r for r in REPORTS if r.id == rid)
    c = explain(r.command, engine="vllm", engine_version=r.version, gpu=r.gpu).payload["verdict"]["confidence"]
    assert c["level"] == "measured" and any(r.url in b for b in c["basis"]), c
    other = "0.33.0" if r.version != "0.33.0" else "0.28.0"
    c = explain(r.command, engine="vllm", engine_version=other, gpu=r.gpu).payload["verdict"]["confidence"]
    assert c["level"] != "measured"


def test_the_issue_refusal_under_the_default_release_rests_on_its_report_and_sglang_never_on_vllms(cli_json):
    """vllm#49064 on the H100 under 0.33.0 (the report ran 0.28.0): calibrated at or above the launch that failed at
    the same --gpu-memory-utilization, which it names; an sglang verdict on the same card never cites a vLLM launch
    (another engine's fraction is another budget)."""
    code, out = cli_json("explain", "--json", "--engine", "vllm", "--gpu", "h100-80gb", "--", "vllm", "serve",
                         "Qwen/Qwen3.8-27B", "--max-model-len", "132000", "--gpu-memory-utilization", "0.9")
    c = out["verdict"]["confidence"]
    assert code == 3 and c["level"] == "calibrated" and c["basis"] == [
        "launch report vllm49064-h100-qwen38-27b (https://github.com/vllm-project/vllm/issues/49064)"]
    assert c["note"].startswith("--gpu-memory-utilization 0.9 is 0.0 at or above launch report vllm49064")
    assert "the weights as loaded" in c["unknowns"]
    code, out = cli_json("explain", "--json", "--gpu", "h100-80gb", "--", "python", "-m", "sglang.launch_server",
                         "--model-path", "Qwen/Qwen3.8-27B", "--mem-fraction-static", "0.9")
    vllm_ids = {x.id for x in REPORTS}
    basis = out["memory"]["verdict"]["confidence"]["basis"]
    assert code == 0 and not any(i in b for b in basis for i in vllm_ids)
