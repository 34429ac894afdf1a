"""Everything the docs page tells a user beside the command (install, build warnings, measured results, examples,
benchmarks) and the calculator's base vs effective commands, each read with its own env (cookbook-semantics §7.5)."""

from __future__ import annotations

import shlex

import pytest

from hybridplan.cookbook.matrix import selection_space
from hybridplan.cookbook.pages import load_page
from hybridplan.cookbook.render import Delta, render
from hybridplan.cookbook.schema import Page

PIN = "1cf2b8c54d81802abc15dcf23a29b9cc687bc01e"
RTX5090_DFLASH = {"hw": "rtx5090", "quant": "nvfp4-fp4-head", "spec": "dflash", "tier": "high-throughput",
                  "ssm-dtype": "float32"}
SKIP_LOCK = "SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1"


@pytest.fixture(scope="module")
def qwen() -> Page:
    return load_page("qwen3.8-27b")


def test_the_dense_lm_head_warning_applies_exactly_to_nvfp4_with_dflash2(qwen):
    seen = set()
    for sel in selection_space(qwen):
        r = render(qwen, sel, pin_ratio=False)
        if r.cell is None:
            continue
        want = r.selection["quant"].startswith("nvfp4") and r.selection["spec"] == "dflash"
        got = [w["requires"] for w in r.build_warnings]
        assert got == (["sgl-project/sglang#35496"] if want else []), r.selection
        seen.add(want)
    assert seen == {True, False}
    w = render(qwen, RTX5090_DFLASH, pin_ratio=False).build_warnings[0]
    assert w["symptom"] == "requires a dense FP16/BF16/FP32 target lm_head"


def test_install_pip_at_the_pin_docker_image_carrying_it_or_built_at_it(qwen):
    on_pin = render(qwen, RTX5090_DFLASH, docker=True, pin_ratio=False).install
    assert on_pin["commit"] == PIN and f"cd sglang && git checkout {PIN}" in on_pin["pip"]
    assert on_pin["docker"] == {"image": "lmsysorg/sglang:dev-qwen38-27b-dflash2", "commit": PIN,
                                "carries_pin": True, "build": []}
    h200 = render(qwen, {"hw": "h200", "quant": "fp8"}, docker=True, pin_ratio=False).install["docker"]
    assert h200["image"] == "lmsysorg/sglang:qwen38-27b" and h200["commit"] is None and h200["carries_pin"] is None
    assert f"cd sglang && git checkout {PIN}" in h200["build"] and h200["build"][-1].startswith("docker build")


def test_install_text_follows_the_mode(cli):
    code, pip, _ = cli("cookbook", "render", "qwen3.8-27b", "--hw", "h200", "--quant", "fp8")
    assert code == 0 and f"Install (commit {PIN})" in pip and 'pip install -e "python[all]"' in pip
    code, docker, _ = cli("cookbook", "render", "qwen3.8-27b", "--hw", "h200", "--quant", "fp8", "--docker")
    assert "image lmsysorg/sglang:qwen38-27b (no recorded commit)" in docker and "or build the pinned commit" in docker
    code, text, _ = cli("cookbook", "render", "qwen3.8-27b", *sum((["--" + k, v] for k, v in RTX5090_DFLASH.items()),
                                                                  []))
    assert 'without it the boot fails with "requires a dense FP16/BF16/FP32 target lm_head"' in text


def test_examples_follow_the_command_and_fill_the_placeholders(qwen):
    r = render(qwen, RTX5090_DFLASH, pin_ratio=False, placeholders={"CURL_PORT": "8001"})
    assert [e["id"] for e in r.examples] == ["thinking", "no-thinking", "tool-calling", "vision"]
    for e in r.examples:
        assert e["command"].startswith("curl http://localhost:8001/v1/chat/completions")
        assert '"model": "RadixArk/Qwen3.8-27B-NVFP4"' in e["command"] and "{{" not in e["command"]
        shlex.split(e["command"])  # one shell command each
    assert all(b["command"].count("--port 8001") == 1 for b in r.benchmarks + r.accuracy)
    # a page whose commands carry no tool parser offers no tool-calling example
    data = qwen.model_dump(mode="json", by_alias=True, exclude_none=True)
    for cell in data["cells"]:
        cell["flags"] = [f for f in cell["flags"] if not f.startswith("--tool-call-parser")]
    bare = Page.model_validate(data)
    assert [e["id"] for e in render(bare, RTX5090_DFLASH, pin_ratio=False).examples] == \
        ["thinking", "no-thinking", "vision"]


def test_example_ids_are_unique(qwen):
    data = qwen.model_dump(mode="json", by_alias=True, exclude_none=True)
    data["examples"].append(dict(data["examples"][0]))
    with pytest.raises(ValueError, match="duplicate example ids: thinking"):
        Page.model_validate(data)


def test_measured_results_are_the_pages_own_numbers(cli):
    k3 = load_page("kimi-k3")
    r = render(k3, {"hw": "mi350x", "strategy": "balanced", "spec": "dspark"}, pin_ratio=False)
    rows = r.verification["measurements"]
    c1 = next(m for m in rows if m["workload"]["concurrency"] == [1])
    assert (c1["ttft_ms"], c1["tpot_ms"], c1["tokens_per_sec_per_gpu"], c1["accept_length"]) == (604, 5.39, 186, 5.0)
    assert c1["build"] == "v0.5.19 @ 12771786" and "max_total_num_tokens" not in c1  # no source gives it
    code, text, _ = cli("cookbook", "render", "kimi-k3", "--hw", "mi350x", "--strategy", "balanced", "--spec",
                        "dspark")
    assert code == 0
    assert "serves on v0.5.19 @ 12771786: ISL 8192 / OSL 1024, concurrency 1; TTFT ms 604, TPOT ms 5.39, " \
           "tok/s/GPU 186, accept length 5" in text
    assert "TTFT ms 23,720, TPOT ms 31.45" in text


def test_calculator_without_playground_changes_reads_the_deploy_command(qwen):
    r = render(qwen, {"hw": "h200", "quant": "fp8", "spec": "eagle"})
    calc = r.calculator
    assert calc["effective"] is None and (calc["request_length"], calc["concurrency"]) == (5120, 64)
    base = calc["base"]["ratio"]
    assert (base["slots_per_request"], base["draft_states_per_request"]) == (5, 4)
    assert f"--mamba-full-memory-ratio {base['mamba_full_memory_ratio_text']}" in r.flags
    assert render(qwen, {"hw": "h200", "quant": "fp8"}, pin_ratio=False).calculator is None


def test_playground_env_rides_with_the_effective_command_only(qwen, cli_json):
    sel = {"hw": "h200", "quant": "fp8", "spec": "eagle"}
    plain = render(qwen, sel)
    r = render(qwen, sel, delta=Delta(flags=("--mamba-radix-cache-strategy extra_buffer_lazy",), env=(SKIP_LOCK,)))
    base, eff = r.calculator["base"], r.calculator["effective"]
    assert base == plain.calculator["base"] and base["env"] == []  # the playground env never leaks into the base
    assert eff["env"] == [SKIP_LOCK] and "--mamba-radix-cache-strategy extra_buffer_lazy" in eff["flags"]
    # S = 3 - skip lock + track: extra_buffer 3 - 0 + 2 = 5; lazy with the lock skipped 3 - 1 + 1 = 3
    assert (base["ratio"]["slots_per_request"], eff["ratio"]["slots_per_request"]) == (5, 3)
    assert r.effective["env"] == [SKIP_LOCK] and r.ratio["effective"]["slots_per_request"] == 3
    # each side is what `hybridplan ratio` answers for that side's command
    for side in (base, eff):
        code, q = cli_json("ratio", "--json", "-L", "5120", "-C", "64", "--engine-version", qwen.engine_version, "--",
                           *shlex.split(side["command"]))
        assert code == 0 and q == side["ratio"]


def test_overlay_env_belongs_to_the_base(cli_json):
    """An overlay option's env is part of the Deploy command: the base side reads it (K3 MI350X Non-Spec)."""
    code, out = cli_json("cookbook", "render", "kimi-k3", "--hw", "mi350x", "--strategy", "balanced", "--spec",
                         "none", "--add-env", "SGLANG_MLA_DECODE_TUNE=0", "--json")
    assert code == 0
    base, eff = out["calculator"]["base"], out["calculator"]["effective"]
    assert "SGLANG_MLA_DECODE_TUNE=1" in base["env"] and "SGLANG_MLA_DECODE_TUNE=0" in eff["env"]
    assert "SGLANG_MLA_DECODE_TUNE=1" not in eff["env"]


def test_cli_playground_changes_show_side_by_side(cli):
    code, out, _ = cli("cookbook", "render", "qwen3.8-27b", "--hw", "h200", "--quant", "fp8", "--spec", "eagle",
                       "--add-flag", "--mamba-radix-cache-strategy extra_buffer_lazy", "--add-env", SKIP_LOCK)
    assert code == 0 and "With the playground changes" in out and "Calculator (L 5120, C 64)" in out
    assert SKIP_LOCK in out.split("With the playground changes")[1]


@pytest.mark.parametrize("args,needle", [
    (["--add-env", "NOEQUALS"], "--add-env takes KEY=VALUE, got 'NOEQUALS'"),
    (["--add-flag", "mem 0.9"], "--add-flag takes '--flag' or '--flag value', got 'mem 0.9'"),
])
def test_cli_bad_playground_changes(cli_json, args, needle):
    code, out = cli_json("cookbook", "render", "qwen3.8-27b", *args, "--json")
    assert code == 2 and needle in out["error"]["message"]
