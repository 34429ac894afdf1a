"""`plan`: the produced command, fed back into explain on the same GPU, meets the targets; nothing-fits says why."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridplan.cookbook.record_evidence import measured_failure
from hybridplan.errors import BadInput
from hybridplan.engine.sglang.serving.explain import explain
from hybridplan.calibration.sources import all_evidence
from hybridplan.hardware.catalog import lookup
from hybridplan.evidence import NO_EVIDENCE_FLOOR, NO_EVIDENCE_STEP
from hybridplan.engine.search import candidates
from hybridplan.engine.sglang.serving.plan import Target, knobs, plan

EVIDENCE = all_evidence  # what the CLI and the web hand in


def check_against_explain(r: dict, gpu: str, C: int, L: int) -> dict:
    """The command plan prints, explained on the same card: C concurrent requests and C x L KV tokens."""
    d = explain(r["command"], gpu=lookup(gpu))
    assert "error" not in d
    S = d["slots_per_request"]
    assert d["max_running_requests"] >= C
    assert d["max_mamba_cache_size"] // S >= C
    assert d["max_total_num_tokens"] >= C * L
    assert (d["max_mamba_cache_size"], d["max_total_num_tokens"]) == (r["max_mamba_cache_size"], r["max_total_num_tokens"])
    # what plan says it serves is what the command lets run at once, never more than its request cap
    assert C <= r["served_concurrency"] == min(r["pool_capacity"], d["max_running_requests"])
    return d


def test_rtx5090_nvfp4_dflash_single_user():
    """The seed target from a plain plan: the page serves it at bf16 state / 0.88 (graphs for one request); the plan
    finds that or a safer setting with no flag beyond the target, and changes no prefill chunk it does not need."""
    base = dict(model="Qwen/Qwen3.8-27B", quant="nvfp4", gpu=lookup("rtx5090"), request_length=9216, concurrency=1,
                spec="dflash", measured=measured_failure, evidence=EVIDENCE)
    r = plan(Target(**base))
    assert r["fits"] and r["checkpoint"]["model_path"] == "RadixArk/Qwen3.8-27B-NVFP4"
    assert "bfloat16 SSM state" in r["search_changes"]
    assert not any("chunked-prefill" in c for c in r["search_changes"])
    assert r["mem_fraction_static"] <= 0.88  # the page's 0.88, or safer
    m = r["mem_fraction"]
    assert m["engine_default"] == pytest.approx(0.721) and m["ceiling"] == 0.88
    assert m["cap"]["point"]["label"] == "qwen3.8-27b:dflash-bf16-first-request-oom"
    assert r["confidence"]["level"] == "calibrated" and r["confidence"]["margin"] > 0
    flags = {c["flag"]: c for c in r["changes"]}
    assert flags["--mamba-ssm-dtype"]["new"] == "bfloat16" and flags["--mamba-ssm-dtype"]["old"] is None
    assert flags["--mem-fraction-static"]["new"] == repr(r["mem_fraction_static"])
    assert "engine default 0.721" in flags["--mem-fraction-static"]["why"]
    assert r["timeline"]["slack_fits_headroom"] and r["timeline"]["margin_gib"]["value"] > 0
    assert "--speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2" in r["command"]
    d = check_against_explain(r, "rtx5090", 1, 9216)
    b = r["breakdown"]
    parts = sum(v for k, v in b.items() if k.endswith("_gib") and k != "capacity_gib")
    assert parts == pytest.approx(b["capacity_gib"])
    assert b["spec_scratch_gib"] > 0 and r["binding_limit"] == d["binding_limit"]
    assert r["min_mem_fraction_static"] <= r["mem_fraction_static"]
    assert any(line.startswith("Mamba Cache is allocated") for line in r["log_lines"])
    # the engine's default leaves the weights no room: the step up is what makes it boot at all
    assert r["mem_fraction"]["step_up"]["serves_at_default"] is False


def test_h200_fp8_sixty_four_users_takes_the_balanced_ratio():
    r = plan(Target(model="Qwen/Qwen3.8-27B", quant="fp8", gpu=lookup("h200"), request_length=5120, concurrency=64,
                    evidence=EVIDENCE))
    assert r["fits"] and r["search_changes"] == [] and r["split"]["kind"] == "ratio"
    assert f"--mamba-full-memory-ratio {r['split']['mamba_full_memory_ratio']!r}" in r["command"]
    assert [c["flag"] for c in r["changes"]] == ["--mem-fraction-static", "--mamba-full-memory-ratio"]
    check_against_explain(r, "h200", 64, 5120)


def test_pinned_plan_is_minimal():
    r = plan(Target(model="Qwen/Qwen3.8-27B", quant="fp8", gpu=lookup("h200"), request_length=5120, concurrency=20,
                    use_pin=True))
    assert r["split"]["kind"] == "pin" and r["split"]["max_mamba_cache_size_pin"] == 100
    check_against_explain(r, "h200", 20, 5120)
    less = explain(r["command"].replace("--max-mamba-cache-size 100", "--max-mamba-cache-size 99"), gpu=lookup("h200"))
    assert less["max_mamba_cache_size"] // less["slots_per_request"] < 20  # one slot less would not do


def test_spec_default_mrr_is_searched_by_default():
    """MTP caps the requests below C at the default: setting --max-running-requests C is in the default search."""
    r = plan(Target(model="Qwen/Qwen3.8-27B", quant="fp8", gpu=lookup("h200"), request_length=5120, concurrency=64,
                    spec="mtp", evidence=EVIDENCE))
    assert r["fits"] and "--max-running-requests 64" in r["command"]
    assert r["tried"][0]["fits"] is False and "set --max-running-requests 64" in r["tried"][0]["reason"]
    assert {"flag": "--max-running-requests", "old": None, "new": "64"}.items() <= \
        next(c for c in r["changes"] if c["flag"] == "--max-running-requests").items()
    check_against_explain(r, "h200", 64, 5120)


def test_weights_that_do_not_fit_name_a_smaller_checkpoint_or_a_larger_card():
    r = plan(Target(model="Qwen/Qwen3.8-27B", gpu=lookup("rtx5090"), request_length=9216, concurrency=1))
    assert not r["fits"] and "exceed" in r["why"] and "GiB" in r["why"]
    changes = [c["change"] for c in r["changes_that_fit"]]
    assert any("checkpoint" in c for c in changes) and any(c.startswith("a larger card: h100-80gb") for c in changes)
    assert r["cheapest_change"] == changes[0]


def test_a_community_int4_export_is_planned_and_offered_when_bf16_does_not_fit():
    """An RTX 3090 owner's Qwen3.8-27B: the bf16 checkpoint (51 GiB) cannot load on 24 GiB; the cheapest change is
    the AutoRound INT4 export the club-3090 launches run, and --quant auto-round plans it as `--quantization
    auto-round` with its weights sized as that export (17.4 GiB), within the INT4 boots' evidence."""
    target = dict(model="Qwen/Qwen3.8-27B", gpu=lookup("rtx3090"), request_length=32768, concurrency=1,
                  measured=measured_failure, evidence=EVIDENCE)
    bf16 = plan(Target(**target))
    assert not bf16["fits"] and "exceed" in bf16["why"]
    assert bf16["cheapest_change"].startswith("a community auto-round INT4 export (--quantization auto-round)")
    r = plan(Target(**target, quant="auto-round"))
    assert r["fits"] and "--model-path Qwen/Qwen3.8-27B --quantization auto-round" in r["command"]
    assert r["breakdown"]["weights_gib"] == pytest.approx(17.41, abs=0.01)
    assert any("community auto-round INT4 export" in w for w in r["warnings"])
    assert r["mem_fraction_static"] <= r["mem_fraction"]["ceiling"]
    support = r["mem_fraction"]["support"]["point"]
    assert support["gpu"] == "rtx3090" and support["model"].startswith("Qwen/Qwen3.8-27B + --quantization auto-round")
    check_against_explain(r, "rtx3090", 1, 32768)


def test_fp4_on_hopper_is_refused_with_the_reason():
    r = plan(Target(model="Qwen/Qwen3.8-27B", quant="nvfp4", gpu=lookup("h200"), request_length=9216, concurrency=1))
    assert not r["fits"] and "no FP4 tensor cores" in r["why"]
    assert r["cheapest_change"] == "the fp8 checkpoint Qwen/Qwen3.8-27B-FP8"


def test_too_much_state_says_so_in_numbers_and_names_the_cheapest_change():
    base = dict(model="Qwen/Qwen3.8-27B", quant="nvfp4", gpu=lookup("rtx5090"), request_length=9216, spec="dspark")
    one = plan(Target(**base, concurrency=1))  # fp32 state does not fit one DSpark user at the default cap
    assert one["fits"] and one["search_changes"]
    check_against_explain(one, "rtx5090", 1, 9216)
    r = plan(Target(**base, concurrency=8))
    assert not r["fits"] and all(not t["fits"] for t in r["tried"])  # nothing fits: no combination of knobs does
    assert len(r["tried"]) == len(candidates(knobs(None, _registry(), 8))) - _unoffered(base, 8)
    assert "GiB of state" in r["why"] and "leaves" in r["why"] and "at mem fraction" in r["why"]
    slack = r["why"].split("its ")[1]
    assert float(slack.split(" GiB slack")[0]) >= float(slack.split("an estimated ")[1].split(" GiB")[0])
    assert r["cheapest_change"] == r["changes_that_fit"][0]["change"]
    # the cheapest change names only the knobs it needs: planning the changed target takes exactly those
    m = re.fullmatch(r"concurrency (\d+) \(from 8\)(?:, with (.*))?", r["cheapest_change"])
    assert m is not None
    smaller = plan(Target(**base, concurrency=int(m.group(1))))
    assert smaller["fits"] and smaller["search_changes"] == (m.group(2).split(", ") if m.group(2) else [])


def test_unknown_quant_without_a_checkpoint_is_estimated_and_said():
    r = plan(Target(model="Qwen/Qwen3.5-27B", quant="fp8", gpu=lookup("h200"), request_length=4096, concurrency=8))
    assert r["fits"] and any("no fp8 checkpoint" in w for w in r["warnings"])


def _registry():
    from hybridplan.engine.api import for_version

    return for_version(None).registry()


def _unoffered(base: dict, C: int) -> int:
    """Candidates the catalog command does not offer (knobs that would change nothing there)."""
    from hybridplan.engine.sglang.serving.plan import Planner

    pl = Planner(Target(**base, concurrency=C))
    return len(candidates(knobs(None, pl.reg, C))) - len(candidates(knobs(pl.base_args(), pl.reg, C)))


def test_candidates_are_ordered_by_what_they_give_up():
    from hybridplan.engine.sglang.serving.plan import Planner

    pl = Planner(Target(model="Qwen/Qwen3.8-27B", quant="nvfp4", gpu=lookup("rtx5090"), request_length=9216,
                        concurrency=1, spec="dflash"))
    cs = candidates(knobs(pl.base_args(), pl.reg, 1))  # the default chunk is 4096: 2048 is one halving
    assert cs[0].changes == [] and cs[1].changes == ["--cuda-graph-max-bs-decode 1"]
    assert cs[2].changes == ["--max-running-requests 1"]
    labels = [c.changes for c in cs]
    assert labels.index(["radix cache off"]) > labels.index(["radix strategy extra_buffer_lazy"])
    assert labels.index(["bfloat16 SSM state"]) < labels.index(["--chunked-prefill-size 512"])
    assert labels.index(["--chunked-prefill-size 2048"]) < labels.index(["bfloat16 SSM state"])


def test_bad_targets():
    with pytest.raises(BadInput):
        plan(Target(model="Qwen/Qwen3.8-27B", gpu=lookup("h200"), request_length=0, concurrency=1))
    with pytest.raises(BadInput, match="unknown --quant"):
        plan(Target(model="Qwen/Qwen3.8-27B", quant="int3", gpu=lookup("h200"), request_length=1, concurrency=1))
    with pytest.raises(BadInput, match="unknown --spec"):
        plan(Target(model="Qwen/Qwen3.8-27B", spec="medusa", gpu=lookup("h200"), request_length=1, concurrency=1))


TARGETS = (("Qwen/Qwen3.8-27B", "fp8", "h200", None), ("Qwen/Qwen3.8-27B", "nvfp4", "rtx-pro-6000", "dspark"),
           ("Qwen/Qwen3.8-27B", "nvfp4", "b200", "mtp"), ("Qwen/Qwen3-Next-80B-A3B-Thinking", None, "b200", None),
           ("moonshotai/Kimi-Linear-48B-A3B-Instruct", None, "h200", None),
           ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", None, "h100", None))


@settings(max_examples=30, deadline=None)
@given(target=st.sampled_from(TARGETS), L=st.integers(512, 131072), C=st.integers(1, 96), pin=st.booleans())
def test_every_plan_meets_its_targets_in_explain(target, L, C, pin):
    model, quant, gpu, spec = target
    r = plan(Target(model=model, quant=quant, gpu=lookup(gpu), spec=spec, request_length=L, concurrency=C,
                    use_pin=pin, evidence=EVIDENCE))
    if not r["fits"]:
        assert r["why"] and r["tried"]
        return
    m = r["mem_fraction"]  # never past the evidence
    assert m["engine_default"] <= m["no_evidence_ceiling"] and r["mem_fraction_static"] <= m["ceiling"]
    d = check_against_explain(r, gpu, C, L)
    if r["split"]["kind"] == "pin":
        pin_k = r["split"]["max_mamba_cache_size_pin"]
        assert pin_k == C * d["slots_per_request"]


def _options(**over):
    base = dict(model="Qwen/Qwen3.8-27B", gpu="rtx5090", gpu_memory_gib=None, request_length=9216, concurrency=1,
                quant="nvfp4", spec=None, draft=None, tp=1, extra=None, max_mem_fraction=None, pin=False, weights_gib=None, hub=False, version=None)
    return {**base, **over}


def test_target_from_options_reads_pasted_text_and_tokens_alike():
    """The web's pasted extra and the CLI's tokens after `--` give one Target; blank text adds nothing."""
    from hybridplan.engine.sglang.serving.plan import target_from_options

    text = target_from_options(**_options(extra="SGLANG_X=1 --kv-cache-dtype fp8_e4m3"))
    tokens = target_from_options(**_options(extra=["SGLANG_X=1", "--kv-cache-dtype", "fp8_e4m3"]))
    assert text == tokens
    assert (text.env, text.extra_flags) == ((("SGLANG_X", "1"),), ("--kv-cache-dtype", "fp8_e4m3"))
    assert text.gpu == lookup("rtx5090")
    blank = target_from_options(**_options(extra="  \n"))
    assert (blank.env, blank.extra_flags) == ((), ())
    assert target_from_options(**_options(pin=True, gpu=None, gpu_memory_gib=48.0)).use_pin


def test_target_from_options_needs_a_card():
    from hybridplan.engine.sglang.serving.plan import target_from_options

    with pytest.raises(BadInput, match="plan needs a GPU"):
        target_from_options(**_options(gpu=None))


def test_a_measured_failure_handed_in_keeps_plan_below_it():
    """The caller's lookup of measured failures (the CLI and web hand in the cookbook records) bounds the fraction: a
    first-request OOM recorded 0.01 below what the plan would pick sends the search to the step below it."""
    from hybridplan.engine.sglang.serving.plan import MeasuredFailure

    base = dict(model="Qwen/Qwen3.8-27B", quant="nvfp4", gpu=lookup("rtx5090"), request_length=9216, concurrency=1,
                spec="dflash")
    free = plan(Target(**base))
    assert free["fits"]
    oom = round(free["mem_fraction_static"] - 0.01, 3)
    seen: list[str] = []

    def oom_below(args, gpu_id):
        seen.append(gpu_id)
        if args["mem_fraction_static"] >= oom:
            return MeasuredFailure(label="r1", phase="first_request", build="1cf2b8c54d8", source="a test rig")
        return None

    bounded = plan(Target(**base, measured=oom_below))
    assert bounded["fits"] and oom - 0.01 <= bounded["mem_fraction_static"] < oom  # the step just below the record
    assert "rtx5090" in seen


def test_the_cli_hands_plan_the_cookbook_records_and_the_boot_logs(cli_json):
    args = dict(model="Qwen/Qwen3.8-27B", quant="nvfp4", gpu=lookup("rtx5090"), request_length=9216, concurrency=1,
                spec="dflash")
    code, out = cli_json("plan", "--model", "Qwen/Qwen3.8-27B", "--quant", "nvfp4", "--gpu", "rtx5090", "-L", "9216",
                         "-C", "1", "--spec", "dflash", "--json")
    assert code == 0
    assert out["command"] == plan(Target(**args, measured=measured_failure, evidence=EVIDENCE))["command"]
    assert out["mem_fraction"]["ceiling"] == 0.88  # the page's bf16 first-request OOM at 0.90 ...
    assert plan(Target(**args))["mem_fraction"]["ceiling"] == 0.9  # ... which a plan without the evidence lacks


# Today's plans beyond any evidence (issue 17): (target, the fraction plan used to recommend)
BEYOND = (
    (dict(model="Qwen/Qwen3.8-27B", quant="fp8", gpu="h200", request_length=5120, concurrency=103), 0.98),
    (dict(model="Qwen/Qwen3-Next-80B-A3B-Thinking", gpu="h100-80gb", tp=4, request_length=4096, concurrency=64), 0.965),
    (dict(model="Qwen/Qwen3.8-27B", gpu="b200", request_length=5120, concurrency=64), 0.974),
    (dict(model="nvidia/NVIDIA-Nemotron-Nano-9B-v2", gpu="rtx4090", request_length=4096, concurrency=16), 0.918),
)


@pytest.mark.parametrize("target,before", BEYOND, ids=[t["gpu"] for t, _ in BEYOND])
def test_plans_without_evidence_stay_within_the_evidence_bound(target, before):
    """No launch on these cards (or a smaller card of their architecture) is within reach: the fraction stays within
    max(engine default + 0.05, 0.90), and the output names the default, the ceiling and what the step up buys."""
    r = plan(Target(**{**target, "gpu": lookup(target["gpu"])}, measured=measured_failure, evidence=EVIDENCE))
    assert r["fits"]
    m = r["mem_fraction"]
    bound = round(max(m["engine_default"] + NO_EVIDENCE_STEP, NO_EVIDENCE_FLOOR), 3)
    assert m["support"] is None and m["ceiling"] == m["no_evidence_ceiling"] == bound
    assert r["mem_fraction_static"] <= bound < before
    assert m["engine_default"] < r["mem_fraction_static"]
    up = m["step_up"]
    assert up["engine_default"] == m["engine_default"] and up["recommended"] == r["mem_fraction_static"]
    assert "why" in up or up["kv_tokens"] > 0
    assert r["confidence"]["level"] in ("extrapolated", "calibrated") and r["confidence"]["note"]


def test_max_mem_fraction_is_the_users_override():
    r = plan(Target(model="Qwen/Qwen3.8-27B", quant="fp8", gpu=lookup("h200"), request_length=5120, concurrency=64,
                    max_mem_fraction=0.95, evidence=EVIDENCE))
    assert r["fits"] and r["mem_fraction_static"] == 0.95 > 0.9


H200_CELL = ("python -m sglang.launch_server --trust-remote-code --model-path Qwen/Qwen3.8-27B-FP8 --kv-cache-dtype "
             "fp8_e4m3 --mem-fraction-static 0.85 --attention-backend flashinfer --chunked-prefill-size 32768 "
             "--max-prefill-tokens 32768 --reasoning-parser qwen3 --tool-call-parser qwen3_coder "
             "--mamba-full-memory-ratio 4.59 --host 0.0.0.0 --port 30000 --mamba-radix-cache-strategy extra_buffer "
             "--mamba-ssm-dtype float32")


def _from_command(command: str, **over) -> dict:
    from hybridplan.engine.sglang.serving.plan import target_from_options

    opts = dict(model=None, gpu="h200", gpu_memory_gib=None, request_length=5120, concurrency=64, quant=None,
                spec=None, draft=None, tp=1, extra=command, max_mem_fraction=None, pin=False, weights_gib=None,
                hub=False, version=None, measured=measured_failure, evidence=EVIDENCE)
    return plan(target_from_options(**{**opts, **over}))


def test_plan_from_the_h200_cells_command_keeps_its_flags_and_ratio():
    """The page's default cell (qwen3.8-27b, H200, FP8) at the page's workload: the command serves as it is, so the
    plan changes nothing: fp8 KV, fp32 SSM state, the 32k chunk, 0.85 and the ratio 4.59 stay."""
    r = _from_command(H200_CELL)
    assert r["fits"] and r["changes"] == [] and r["command"] == H200_CELL
    assert r["split"] == {"kind": "ratio", "kept": True, "mamba_full_memory_ratio": 4.59,
                          "mamba_full_memory_ratio_text": "4.59", "max_mamba_cache_size_pin": 320,
                          "binding_pool": r["split"]["binding_pool"]}
    assert r["mem_fraction_static"] == 0.85 and r["target"]["command"] == H200_CELL
    assert r["checkpoint"]["model_path"] == "Qwen/Qwen3.8-27B-FP8"


def test_plan_from_a_command_changes_only_what_it_must_and_says_why():
    """Asked for more requests than its --max-running-requests admits and a fraction above the evidence: those two
    change (and the ratio, to serve the new load), every other flag the user typed stays, in order."""
    cmd = H200_CELL.replace("--mem-fraction-static 0.85", "--mem-fraction-static 0.97") + " --max-running-requests 8"
    r = _from_command(cmd, concurrency=100)
    assert r["fits"]
    changed = {c["flag"]: c for c in r["changes"]}
    assert changed["--max-running-requests"]["old"] == "8" and changed["--max-running-requests"]["new"] == "100"
    assert changed["--mem-fraction-static"]["old"] == "0.97"
    assert float(changed["--mem-fraction-static"]["new"]) <= r["mem_fraction"]["ceiling"] <= 0.9
    assert all(c["why"] for c in r["changes"])
    kept = ("--kv-cache-dtype fp8_e4m3", "--reasoning-parser qwen3", "--tool-call-parser qwen3_coder",
            "--host 0.0.0.0", "--port 30000", "--trust-remote-code", "--max-prefill-tokens 32768")
    assert all(k in r["command"] for k in kept)
    assert r["command"].index("--kv-cache-dtype") < r["command"].index("--reasoning-parser")


def test_plan_from_a_command_refuses_catalog_options():
    with pytest.raises(BadInput, match="--quant: the launch command"):
        _from_command(H200_CELL, quant="fp8")
    with pytest.raises(BadInput, match="plan needs --model or a launch command"):
        _from_command("--kv-cache-dtype fp8_e4m3")
