"""Public launch reports (data/sglang_launch_reports.yaml) against `explain --gpu`: every report is called served or failed,
in the right kind of phase, a failed launch is never predicted to serve, and the verdict names the reports it rests
on. The community checkpoints they run are sized as loaded (an AutoRound INT4 export, an MTP head's own embedding and
lm_head)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hybridplan.errors import BadInput
from hybridplan.hardware.catalog import lookup
from hybridplan.engine.sglang.serving.loading import load as load_command
from hybridplan.evidence_table import on_card
from hybridplan.calibration.launch_reports import check, load, parse
from hybridplan.weights.quant import method_policy, policy_from_config, scheme_bytes
from hybridplan.engine.api import weights_query
from hybridplan.weights.report import model_weights

REPORTS = load("sglang")
CHECKS = [c for r in REPORTS for c in check(r)]
GIB = 1 << 30
INT4_3090 = ("python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B --quantization auto-round "
             "--kv-cache-dtype fp8_e4m3 --mamba-ssm-dtype bfloat16 --max-running-requests 1")


def test_the_reports_cover_cards_outcomes_and_phases_with_links():
    assert len(CHECKS) >= 15 and len({r.id for r in REPORTS}) == len(REPORTS)
    assert {r.gpu for r in REPORTS} >= {"rtx3090", "dgx-spark"}
    assert {r.phase for r in REPORTS} >= {None, "kv_pool", "cuda_graph", "first_request"}
    assert all(r.url.startswith("https://github.com/") and r.source for r in REPORTS)


@pytest.mark.parametrize("label", [c.label for c in CHECKS])
def test_explain_calls_each_report_right(label):
    c = next(c for c in CHECKS if c.label == label)
    assert c.verdict is not None, c.error
    assert not c.unsafe, f"{label} failed ({c.report.phase}) but is predicted to serve: {c.verdict.why}"
    assert c.agrees, f"{label}: reported {c.report.outcome} ({c.report.phase}), predicted {c.predicted}"


def test_the_earlyoom_host_decides_the_cookbook_pages_gb10_failure():
    """GB10 shares its memory with the host: the engine's baseline is the host's available memory, the stock host swaps
    the server's later host growth out, and an earlyoom host keeps it and its threshold. The cookbook page's 0.85
    failure (earlyoom SIGTERMs) fails on its earlyoom host and would serve on the stock host."""
    gb10 = {c.label: c for c in CHECKS if c.report.gpu == "dgx-spark"}
    page = next(r for r in REPORTS if r.id == "sglang-cookbook-gb10-fp8-ssm-bf16-mf085")
    failed = gb10[page.id].verdict
    assert page.host == "earlyoom" and not failed.serves and failed.phase == "cuda_graph"
    assert failed.figure("capture_need_gib") - failed.figure("slack_gib") < 0.5  # "which 15 is margin noise"
    assert check(replace(page, host=None))[0].verdict.serves


def test_public_gb10_launches_that_served_at_high_fractions_are_called_served():
    """MiaAI-Lab's MTP service served Qwen3.8-27B NVFP4 at 0.95 on one DGX Spark (5.66 GiB of slack): what graph
    capture allocates there is the engine's (well under a GiB), not a share of the host's memory."""
    gb10 = {c.label: c for c in CHECKS if c.report.gpu == "dgx-spark"}
    served = gb10["miaai-qwen38-27b-nvfp4-mtp-mf095"].verdict
    assert served.serves and served.figure("capture_need_gib") < 1.0 < served.figure("slack_gib") < 6.0
    assert {c.report.outcome for c in gb10.values()} == {"served", "failed"} and len(gb10) >= 4
    assert all(c.agrees for c in gb10.values())


def test_the_verdict_names_the_reports_it_rests_on(cli_json):
    code, out = cli_json("explain", "--json", "--gpu", "rtx3090", "--engine-version", "0.5.21", "--",
                         *(INT4_3090 + " --chunked-prefill-size 2048 --attention-backend flashinfer "
                           "--context-length 32768 --mem-fraction-static 0.88 --max-mamba-cache-size 20").split())
    c = out["memory"]["verdict"]["confidence"]
    assert code == 0 and out["memory"]["verdict"]["serves"] and c["level"] == "measured"
    assert any("club3090-single-int4-nomtp-mf088" in b and "github.com/noonghunna/club-3090" in b for b in c["basis"])
    pts = on_card("launch_reports", lookup("rtx3090"), "sglang")
    assert {p.kind for p in pts} == {"launch report"} and all(p.gpu == "rtx3090" for p in pts)
    # on the H200's class only vLLM's launches (H100): evidence for vLLM's verdicts, none for sglang's
    assert on_card("launch_reports", lookup("h200"), "sglang") == ()
    assert {p.engine for p in on_card("launch_reports", lookup("h200"), "vllm")} == {"vllm"}


def test_auto_round_on_the_bf16_geometry_sizes_the_int4_export_not_the_bf16_checkpoint():
    card = lookup("rtx3090")
    bf16 = load_command(INT4_3090.replace(" --quantization auto-round", ""), platform=card.platform())
    int4 = load_command(INT4_3090, platform=card.platform())
    w16 = model_weights(weights_query(bf16.args, bf16.geometry), bf16.geometry).target_per_rank.value / GIB
    w4 = model_weights(weights_query(int4.args, int4.geometry), int4.geometry).target_per_rank
    # 4-bit linears in groups of 128 (+ fp16 scales, packed zeros); embeddings, lm_head and the vision tower in bf16
    assert w16 > 50 and 16 < w4.value / GIB < 19 and "auto-round INT4 (group 128)" in w4.note


def test_integer_formats_count_values_scales_and_zero_points():
    assert scheme_bytes("int4", 5120, 5120) == 5120 * 5120 // 2 + 2 * 5120 * 40 + 5120 * 40 // 2
    assert scheme_bytes("int4_sym", 5120, 5120) == 5120 * 5120 // 2 + 2 * 5120 * 40
    assert scheme_bytes("int8", 4096, 256, block=128) == 4096 * 256 + 2 * 4096 * 2 + 4096 * 2
    p = policy_from_config({"quantization_config": {"quant_method": "auto-round", "bits": 4, "group_size": 64,
                                                    "extra_config": {"model.visual.merger": {"bits": 16}}}}, None)
    assert (p.linear, p.block, p.lm_head, p.exclude) == ("int4", 64, "bf16", ("model.visual.merger",))
    ct = policy_from_config({"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"g": {
        "targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "symmetric": True, "group_size": 32}}}}}, None)
    assert (ct.linear, ct.block) == ("int4_sym", 32)
    # a config that states its own quantization is read as it says; --quantization only fills in a missing one
    assert method_policy("gptq", {"quantization_config": {"quant_method": "fp8"}}, None) is None
    assert method_policy("fp8", {"quantization_config": {"quant_method": "gptq"}}, None) is None
    assert method_policy("awq", {}, None).linear == "int4"
    # fp8 quantizes an unquantized checkpoint as it loads: FP8 linears and experts, one scale per tensor
    assert (method_policy("fp8", {}, None).linear, method_policy("fp8", {}, None).lm_head) == ("fp8", "bf16")
    with pytest.raises(BadInput, match="quantization_config.bits"):
        policy_from_config({"quantization_config": {"quant_method": "gptq", "bits": "four"}}, None)


@pytest.mark.parametrize("tp", [1, 2])
def test_an_mtp_head_holds_its_own_embedding_and_lm_head_while_the_pools_are_sized(tp):
    card = lookup("rtx3090")
    cmd = (INT4_3090 + f" --tp-size {tp} --speculative-algorithm EAGLE --speculative-num-steps 4 "
           "--speculative-eagle-topk 1 --speculative-num-draft-tokens 5")
    loaded = load_command(cmd, platform=card.platform())
    w = model_weights(weights_query(loaded.args, loaded.geometry), loaded.geometry)
    # Qwen3.8-27B: vocab 248,320 x hidden 5,120 in bf16, the embedding and the lm_head, vocab split over TP
    assert w.draft_released_per_rank == 2 * 2 * 5120 * (248_320 // tp)
    assert w.draft_per_rank.value > w.draft_released_per_rank and "set_embed_and_head" in w.draft_per_rank.note


GOOD = {"id": "r", "url": "https://github.com/x/y", "gpu": "rtx3090", "gpu_count": 1, "version": "0.5.21",
        "command": "python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B", "outcome": "served",
        "request_tokens": 2048, "source": "s"}
HEAD = {"engine": "sglang", "phases": {"boot": ["weights", "kv_pool", "state_pool"],
                                       "runtime": ["cuda_graph", "first_request"]}}


def _file(*entries, **head):
    return {**HEAD, **head, "reports": list(entries)}


@pytest.mark.parametrize("entry, field", [
    ({**GOOD, "url": "http://x"}, r"reports\[0\]\.url"),
    ({**GOOD, "gpu": "gtx-9999"}, r"reports\[0\]\.gpu"),
    ({**GOOD, "version": "0.5.12"}, r"reports\[0\]\.version"),
    ({**GOOD, "outcome": "failed"}, r"reports\[0\]\.phase"),
    ({**GOOD, "phase": "boot"}, r"reports\[0\]\.phase"),
    ({**GOOD, "sweep": {"flag": "--mem-fraction-static", "values": []}}, r"reports\[0\]\.sweep"),
    ({**GOOD, "request_tokens": 0}, r"reports\[0\]\.request_tokens"),
    ({**GOOD, "extra": 1}, r"reports\[0\]: unknown field extra"),
    ({**GOOD, "host": "systemd-oomd"}, r"reports\[0\]\.host"),
    ({**GOOD, "logged": {"num_blocks": -1}}, r"reports\[0\]\.logged\.num_blocks"),
    ({**GOOD, "logged": {"blocks": 3}}, r"reports\[0\]\.logged: unknown figure 'blocks'"),
    ({**GOOD, "differs": {"num_blocks": ""}}, r"reports\[0\]\.differs"),
    ({**GOOD, "differs": {"speed": "slow"}}, r"reports\[0\]\.differs: unknown figure 'speed'"),
])
def test_bad_data_names_the_field(entry, field):
    assert parse(_file(GOOD))[0].version == "0.5.21"
    assert parse(_file({**GOOD, "version": "1cf2b8c"}))[0].version == "1cf2b8c"
    with pytest.raises(BadInput, match=field):
        parse(_file(entry))


@pytest.mark.parametrize("head, field", [
    ({"engine": "llama.cpp"}, "engine: one of sglang, vllm"),
    ({"phases": {"boot": ["weights"]}}, "phases"),
    ({"phases": {"boot": [], "runtime": ["cuda_graph"]}}, "phases"),
])
def test_a_file_states_its_engine_and_phases(head, field):
    with pytest.raises(BadInput, match=field):
        parse(_file(GOOD, **head))


def test_each_engine_checks_the_release_against_its_own_releases():
    """The same version string is a release of one engine and not of another: the file's engine decides."""
    vllm = {"engine": "vllm", "phases": {"boot": ["kv_cache"], "runtime": ["cuda_graph"]}}
    assert parse(_file({**GOOD, "version": "0.24.0"}, **vllm))[0].engine == "vllm"
    with pytest.raises(BadInput, match=r"reports\[0\]\.version: vllm models no release or build '0.5.21'"):
        parse(_file(GOOD, **vllm))
    with pytest.raises(BadInput, match=r"reports\[0\]\.phase"):  # a phase of the other engine's file
        parse(_file({**GOOD, "version": "0.24.0", "outcome": "failed", "phase": "kv_pool"}, **vllm))
