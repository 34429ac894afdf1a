"""The Memory picture and the Plan panel in headless Chromium: segments carry the CLI's bytes and provenance."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

GIB = 1 << 30


def _segments(page, figure: str) -> dict:
    out = {}
    for rect in page.locator(f"#{figure} rect").all():
        out[rect.get_attribute("data-segment")] = (float(rect.get_attribute("data-gib")),
                                                   int(rect.get_attribute("data-bytes")), rect.get_attribute("data-source"))
    return out


def test_deploy_memory_picture_is_explain_on_the_card(page, cli_json, screenshot):
    page.goto(page.base + "/?page=qwen3.8-27b&hw=h200&quant=fp8")
    page.wait_for_selector("#memory-deploy rect")
    command = page.inner_text("#deploy-command")
    code, expected = cli_json("explain", "--json", "--gpu", "h200", "--", command)
    assert code == 0
    b = expected["memory"]["breakdown"]
    shown = _segments(page, "memory-deploy")
    assert set(shown) == {k for k, v in b.items() if k.endswith("_gib") and k != "capacity_gib" and v is not None}
    for key, (gib, nbytes, source) in shown.items():
        assert gib == pytest.approx(b[key]) and source == b["sources"][key]
    assert shown["kv_pool_gib"][1] == expected["allocated"]["kv_bytes"]
    assert shown["state_pool_gib"][1] == expected["allocated"]["conv_state_bytes"] + expected["allocated"]["ssm_state_bytes"]
    # hover shows bytes and provenance
    page.hover('#memory-deploy rect[data-segment="kv_pool_gib"]')
    tip = page.inner_text("#memory-deploy .tip")
    assert f"{expected['allocated']['kv_bytes']:,} B" in tip and "engine rule" in tip
    # keyboard focus does the same for the weights, whose note says how they were estimated
    page.focus('#memory-deploy rect[data-segment="weights_gib"]')
    assert expected["memory"]["timeline"]["target_weights_gib"]["note"] in page.inner_text("#memory-deploy .tip")
    figures = {k: int(page.get_attribute(f'#memory-pools [data-key="{k}"]', "data-value"))
               for k in ("max_mamba_cache_size", "max_total_num_tokens", "max_running_requests")}
    assert figures == {k: expected[k] for k in figures}
    screenshot(page, "memory-deploy")


def test_explain_on_a_gpu_draws_the_picture(page, cli_json):
    cmd = "python -m sglang.launch_server --model-path Qwen/Qwen3.5-9B --mem-fraction-static 0.8"
    page.goto(page.base + "/")
    page.wait_for_selector('#explain-gpu option[value="h100-80gb"]', state="attached")
    page.fill("#explain-command", cmd)
    page.select_option("#explain-gpu", "h100-80gb")
    page.click("#explain-run")
    page.wait_for_selector("#memory-explain rect")
    _, expected = cli_json("explain", "--json", "--gpu", "h100-80gb", "--", cmd)
    assert _segments(page, "memory-explain")["kv_pool_gib"][1] == expected["allocated"]["kv_bytes"]
    assert "egpu=h100-80gb" in page.url


def test_plan_panel_shows_the_cli_plan(page, cli_json, screenshot):
    page.goto(page.base + "/?pm=Qwen/Qwen3.8-27B&pq=nvfp4&ps=dflash&pg=rtx5090&pL=9216&pC=1")
    page.wait_for_selector("#plan-command")
    code, expected = cli_json("plan", "--json", "--model", "Qwen/Qwen3.8-27B", "--quant", "nvfp4", "--spec", "dflash",
                              "--gpu", "rtx5090", "-L", "9216", "-C", "1")
    assert code == 0
    assert page.inner_text("#plan-command") == expected["command"]
    assert float(page.get_attribute('#plan-fraction [data-key="mem_fraction_static"]', "data-value")) == \
        expected["mem_fraction_static"]
    # the engine's default beside the recommendation, the evidence ceiling and the confidence
    assert float(page.get_attribute('#plan-fraction [data-key="engine_default"]', "data-value")) == \
        expected["mem_fraction"]["engine_default"]
    assert float(page.get_attribute('#plan-fraction [data-key="ceiling"]', "data-value")) == 0.88
    assert page.get_attribute("#plan-verdict-confidence", "data-level") == expected["confidence"]["level"]
    assert page.locator("#plan-change-list li").evaluate_all("els => els.map(e => e.dataset.flag)") == \
        [c["flag"] for c in expected["changes"]]
    assert int(page.get_attribute('#plan-figures [data-key="max_running_requests"]', "data-value")) == \
        expected["max_running_requests"]
    shown = _segments(page, "memory-plan")
    assert shown["weights_gib"][0] == pytest.approx(expected["breakdown"]["weights_gib"])
    screenshot(page, "plan")
    # nothing fits: why, in numbers, and what to change
    page.fill("#plan-C", "64")
    page.select_option("#plan-quant", "")
    page.select_option("#plan-spec", "")
    page.click("#plan-run")
    page.wait_for_selector("#plan-why")
    _, none = cli_json("plan", "--json", "--model", "Qwen/Qwen3.8-27B", "--gpu", "rtx5090", "-L", "9216", "-C", "64")
    assert none["why"] in page.inner_text("#plan-why")
    assert page.locator("#plan-changes li").all_inner_texts() == [c["change"] for c in none["changes_that_fit"]]


def test_plan_answers_the_deploy_command_of_the_selection(page, cli_json):
    """The default page opens on qwen3.8-27b H200 FP8: Plan answers that very Deploy command at the Calculator's L
    and C, changes nothing, and shows the cell's ratio 4.59 and the Calculator's pin; the Memory picture's verdict and
    Plan carry the same confidence."""
    page.goto(page.base + "/")
    page.wait_for_selector("#plan-command")
    page.wait_for_selector("#calc-answer")
    assert "answers the Deploy command" in page.inner_text("#plan-follow")
    assert page.inner_text("#plan-changes-made") == "No changes: the command serves the target as it is."
    deploy = " ".join(page.inner_text("#deploy-command").replace("\\\n", " ").split())
    plan = " ".join(page.inner_text("#plan-command").split())
    for flag in ("--kv-cache-dtype fp8_e4m3", "--mamba-ssm-dtype float32", "--chunked-prefill-size 32768",
                 "--mamba-full-memory-ratio 4.59"):
        assert flag in deploy and flag in plan
    ratio = page.get_attribute('#plan-figures [data-key="mamba_full_memory_ratio"]', "data-value")
    assert float(ratio) == 4.59
    assert page.get_attribute('#plan-figures [data-key="max_mamba_cache_size_pin"]', "data-value") == \
        page.get_attribute('#calc-answer [data-key="max_mamba_cache_size_pin"]', "data-value")
    assert page.get_attribute("#plan-verdict-confidence", "data-level") == \
        page.get_attribute("#memory-verdict-confidence", "data-level")
