"""`plan`: the produced command, fed back into explain on the same GPU, meets the targets; nothing-fits says why."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridplan.errors import BadInput
from hybridplan.explain import explain
from hybridplan.hardware.catalog import lookup
from hybridplan.planner.plan import Target, candidates, plan


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
    base = dict(model="Qwen/Qwen3.8-27B", quant="nvfp4", gpu=lookup("rtx5090"), request_length=9216, concurrency=1,
                spec="dflash")
    untuned = plan(Target(**base))  # 48 requests' verify scratch leaves the card nothing (the page pins one request)
    assert not untuned["fits"] and untuned["cheapest_change"].startswith("--max-running-requests 1")
    r = plan(Target(**base, tune_mrr=True))
    assert r["fits"] and r["checkpoint"]["model_path"] == "RadixArk/Qwen3.8-27B-NVFP4"
    assert r["changes"] == ["bfloat16 SSM state", "--max-running-requests 1"]
    assert r["timeline"]["slack_fits_headroom"] and r["timeline"]["margin_gib"]["value"] > 0
    assert "--speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2" in r["command"]
    d = check_against_explain(r, "rtx5090", 1, 9216)
    b = r["breakdown"]
    parts = sum(v for k, v in b.items() if k.endswith("_gib") and k != "capacity_gib")
    assert parts == pytest.approx(b["capacity_gib"])
    assert b["spec_scratch_gib"] > 0 and r["binding_limit"] == d["binding_limit"]
    assert r["min_mem_fraction_static"] <= r["mem_fraction_static"]
    assert any(line.startswith("Mamba Cache is allocated") for line in r["log_lines"])


def test_h200_fp8_sixty_four_users_takes_the_balanced_ratio():
    r = plan(Target(model="Qwen/Qwen3.8-27B", quant="fp8", gpu=lookup("h200"), request_length=5120, concurrency=64))
    assert r["fits"] and r["changes"] == [] and r["split"]["kind"] == "ratio"
    assert f"--mamba-full-memory-ratio {r['split']['mamba_full_memory_ratio']!r}" in r["command"]
    check_against_explain(r, "h200", 64, 5120)


def test_pinned_plan_is_minimal():
    r = plan(Target(model="Qwen/Qwen3.8-27B", quant="fp8", gpu=lookup("h200"), request_length=5120, concurrency=20,
                    use_pin=True))
    assert r["split"]["kind"] == "pin" and r["split"]["max_mamba_cache_size_pin"] == 100
    check_against_explain(r, "h200", 20, 5120)
    less = explain(r["command"].replace("--max-mamba-cache-size 100", "--max-mamba-cache-size 99"), gpu=lookup("h200"))
    assert less["max_mamba_cache_size"] // less["slots_per_request"] < 20  # one slot less would not do


def test_spec_default_mrr_needs_tuning_and_tuning_fixes_it():
    base = dict(model="Qwen/Qwen3.8-27B", quant="fp8", gpu=lookup("h200"), request_length=5120, concurrency=64,
                spec="mtp")
    r = plan(Target(**base))
    assert not r["fits"] and "set --max-running-requests 64" in r["why"]
    assert "--max-running-requests 64" in r["cheapest_change"]
    tuned = plan(Target(**base, tune_mrr=True))
    assert tuned["fits"] and "--max-running-requests 64" in tuned["command"]
    check_against_explain(tuned, "h200", 64, 5120)


def test_weights_that_do_not_fit_name_a_smaller_checkpoint_or_a_larger_card():
    r = plan(Target(model="Qwen/Qwen3.8-27B", gpu=lookup("rtx5090"), request_length=9216, concurrency=1))
    assert not r["fits"] and "exceed" in r["why"] and "GiB" in r["why"]
    changes = [c["change"] for c in r["changes_that_fit"]]
    assert any("checkpoint" in c for c in changes) and any(c.startswith("a larger card: h100-80gb") for c in changes)
    assert r["cheapest_change"] == changes[0]


def test_fp4_on_hopper_is_refused_with_the_reason():
    r = plan(Target(model="Qwen/Qwen3.8-27B", quant="nvfp4", gpu=lookup("h200"), request_length=9216, concurrency=1))
    assert not r["fits"] and "no FP4 tensor cores" in r["why"]
    assert r["cheapest_change"] == "the fp8 checkpoint Qwen/Qwen3.8-27B-FP8"


def test_too_much_state_says_so_in_numbers_and_names_the_cheapest_change():
    base = dict(model="Qwen/Qwen3.8-27B", quant="nvfp4", gpu=lookup("rtx5090"), request_length=9216, spec="dspark")
    one = plan(Target(**base, concurrency=1))  # fp32 state does not fit one DSpark user at the default cap; bf16 does
    assert one["fits"] and one["changes"] == ["bfloat16 SSM state"]
    check_against_explain(one, "rtx5090", 1, 9216)
    r = plan(Target(**base, concurrency=4))
    assert not r["fits"]
    assert "GiB of state" in r["why"] and "leaves" in r["why"] and "at mem fraction" in r["why"]
    slack = r["why"].split("its ")[1]
    assert float(slack.split(" GiB slack")[0]) >= float(slack.split("an estimated ")[1].split(" GiB")[0])
    assert r["cheapest_change"] == r["changes_that_fit"][0]["change"]


def test_unknown_quant_without_a_checkpoint_is_estimated_and_said():
    r = plan(Target(model="Qwen/Qwen3.5-27B", quant="fp8", gpu=lookup("h200"), request_length=4096, concurrency=8))
    assert r["fits"] and any("no fp8 checkpoint" in w for w in r["warnings"])


def test_candidates_are_ordered_by_what_they_give_up():
    cs = candidates(Target(model="m", gpu=lookup("h200"), request_length=1, concurrency=1, tune_mrr=True), 1)
    assert cs[0].changes == [] and cs[1].changes == ["--max-running-requests 1"]
    assert [c.strategy for c in cs].index("radix off") > [c.strategy for c in cs].index("extra_buffer_lazy")


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
@given(target=st.sampled_from(TARGETS), L=st.integers(512, 131072), C=st.integers(1, 96), pin=st.booleans(),
       tune=st.booleans())
def test_every_plan_meets_its_targets_in_explain(target, L, C, pin, tune):
    model, quant, gpu, spec = target
    r = plan(Target(model=model, quant=quant, gpu=lookup(gpu), spec=spec, request_length=L, concurrency=C,
                    use_pin=pin, tune_mrr=tune))
    if not r["fits"]:
        assert r["why"] and r["tried"]
        return
    d = check_against_explain(r, gpu, C, L)
    if r["split"]["kind"] == "pin":
        pin_k = r["split"]["max_mamba_cache_size_pin"]
        assert pin_k == C * d["slots_per_request"]


def _options(**over):
    base = dict(model="Qwen/Qwen3.8-27B", gpu="rtx5090", gpu_memory_gib=None, request_length=9216, concurrency=1,
                quant="nvfp4", spec=None, draft=None, tp=1, extra=None, tune_mrr=False, tune_chunked_prefill=False,
                max_mem_fraction=None, pin=False, weights_gib=None, hub=False, version=None)
    return {**base, **over}


def test_target_from_options_reads_pasted_text_and_tokens_alike():
    """The web's pasted extra and the CLI's tokens after `--` give one Target; blank text adds nothing."""
    from hybridplan.planner.plan import target_from_options

    text = target_from_options(**_options(extra="SGLANG_X=1 --kv-cache-dtype fp8_e4m3"))
    tokens = target_from_options(**_options(extra=["SGLANG_X=1", "--kv-cache-dtype", "fp8_e4m3"]))
    assert text == tokens
    assert (text.env, text.extra_flags) == ((("SGLANG_X", "1"),), ("--kv-cache-dtype", "fp8_e4m3"))
    assert text.gpu == lookup("rtx5090")
    blank = target_from_options(**_options(extra="  \n"))
    assert (blank.env, blank.extra_flags) == ((), ())
    assert target_from_options(**_options(pin=True, gpu=None, gpu_memory_gib=48.0)).use_pin


def test_target_from_options_needs_a_card():
    from hybridplan.planner.plan import target_from_options

    with pytest.raises(BadInput, match="plan needs a GPU"):
        target_from_options(**_options(gpu=None))


def test_a_measured_failure_handed_in_keeps_plan_below_it():
    """The caller's lookup of measured failures (the CLI and web hand in the cookbook records) bounds the fraction: a
    first-request OOM recorded at or above 0.88 sends the search to the step below it."""
    from hybridplan.planner.plan import MeasuredFailure

    base = dict(model="Qwen/Qwen3.8-27B", quant="nvfp4", gpu=lookup("rtx5090"), request_length=9216, concurrency=1,
                spec="dflash", tune_mrr=True)
    free = plan(Target(**base))
    assert free["fits"] and free["mem_fraction_static"] > 0.88
    seen: list[tuple[str, str]] = []

    def oom_at_088(args, gpu_id, version):
        seen.append((gpu_id, version))
        if args["mem_fraction_static"] >= 0.88:
            return MeasuredFailure(label="r1", phase="first_request", build="1cf2b8c54d8", source="a test rig")
        return None

    bounded = plan(Target(**base, measured=oom_at_088))
    assert bounded["fits"] and 0.87 <= bounded["mem_fraction_static"] < 0.88  # the step just below the record
    assert ("rtx5090", "0.5.23") in seen


def test_the_cli_hands_plan_the_cookbook_records(cli_json):
    from hybridplan.cookbook.record_checks import measured_failure

    args = dict(model="Qwen/Qwen3.8-27B", quant="nvfp4", gpu=lookup("rtx5090"), request_length=9216, concurrency=1,
                spec="dflash", tune_mrr=True)
    code, out = cli_json("plan", "--model", "Qwen/Qwen3.8-27B", "--quant", "nvfp4", "--gpu", "rtx5090", "-L", "9216",
                         "-C", "1", "--spec", "dflash", "--tune-mrr", "--json")
    assert code == 0
    assert out["command"] == plan(Target(**args, measured=measured_failure))["command"]
