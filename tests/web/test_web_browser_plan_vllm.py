"""Plan on vLLM in headless Chromium: the panel shows `plan --engine vllm --json`'s candidates, best command, reasons,
warnings and evidence for Qwen3.5-27B at 256K on an H200, and a bad launch is one line on the command field."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

COMMAND = "vllm serve Qwen/Qwen3.5-27B"


def test_plan_on_vllm_shows_the_cli_plan(page: Any, cli_json: Any, screenshot: Any) -> None:
    code, expected = cli_json("plan", "--engine", "vllm", "--json", "--gpu", "h200", "-L", "262144", "-C", "8", "--",
                              *COMMAND.split())
    assert code == 0 and expected["best"]["changes"] == {"--kv-cache-dtype": "fp8"}
    page.goto(page.base + "/")
    page.click('#plan-engine [data-engine="vllm"]')
    assert page.locator("#plan-model").is_hidden() and page.locator("#plan-pin").is_hidden()
    assert page.inner_text("#plan-follow") == "Plan no longer follows the Deploy selection."
    page.fill("#plan-vllm-command", COMMAND)
    page.select_option("#plan-gpu", "h200")
    page.fill("#plan-L", "262144")
    page.fill("#plan-C", "8")
    page.click("#plan-run")
    page.wait_for_selector("#plan-vllm-candidates")

    assert page.inner_text("#plan-command") == expected["command"]
    rows = page.locator("#plan-vllm-candidates tbody tr")
    assert rows.count() == 1 + len(expected["candidates"])
    keys = ("gpu_memory_utilization", "available_kv_gib", None, "block_size", "kv_cache_tokens", "max_concurrency",
            "fits")
    for i, r in enumerate([expected["baseline"], *expected["candidates"]]):
        cells = rows.nth(i).locator("td")
        assert cells.nth(0).inner_text() == ("baseline (as launched)" if i == 0 else " ".join(
            f"{k} {v}".strip() for k, v in r["changes"].items()))
        assert cells.nth(3).inner_text() == r["mamba_cache_mode"]
        for j, k in enumerate(keys, start=1):
            if k:
                assert cells.nth(j).get_attribute("data-value") == (str(r[k]).lower() if k == "fits" else str(r[k]))
    assert rows.nth(1).get_attribute("class") == "best"  # the cheapest fitting candidate is the command's
    assert page.locator("#plan-vllm-candidates tbody tr.best").count() == 1
    assert page.inner_text("#plan-vllm-candidates tbody tr.best td:nth-child(7)") == "8.51x"
    assert page.inner_text("#plan-vllm-candidates tbody tr.best td:nth-child(6)") == "2,230,496"
    assert page.inner_text("#plan-vllm-why") == "--kv-cache-dtype fp8: " + expected["best"]["why"]["--kv-cache-dtype"]
    assert page.get_attribute('#plan-vllm-figures [data-key="kv_cache_tokens"]', "data-value") == str(
        expected["best"]["kv_cache_tokens"])
    assert page.locator("#plan-warnings li").all_inner_texts() == expected["warnings"]
    assert expected["measured"]["rule"] in page.inner_text("#plan-vllm-evidence")
    assert page.get_attribute("#plan-vllm-evidence", "data-source") == "card"
    assert page.locator("#plan-command-copy").is_visible()
    assert "pe=vllm" in page.url and "pg=h200" in page.url
    screenshot(page, "plan-vllm")

    # its command opened in Explain on vLLM (the same card, the card-alone memory) tells the same story
    page.click("#plan-command-explain")
    page.wait_for_selector('#explain-vllm-pool [data-key="kv_cache_tokens"]')
    assert page.input_value("#explain-command") == expected["command"]
    assert page.get_attribute('#explain-vllm-pool [data-key="kv_cache_tokens"]', "data-value") == str(
        expected["best"]["kv_cache_tokens"])

    # a launch vLLM's parser refuses: one line on the command field, no stale table
    page.fill("#plan-vllm-command", COMMAND + " --bogus 1")
    page.click("#plan-run")
    page.wait_for_selector("#plan-vllm-command-err:not([hidden])")
    err = page.inner_text("#plan-vllm-command-err")
    assert "unrecognized arguments: --bogus 1" in err and "\n" not in err.strip()
    assert page.inner_text("#plan-out") == ""

    # an older release from the list the engine API gives: its own plan, kept in the link
    options = page.locator("#plan-vllm-version option").all_inner_texts()
    assert options[0] == "0.33.0 (the default)" and options[1:3] == ["0.34.0", "0.32.0"] and options[-1] == "0.20.0"
    assert len(options) == 20
    page.fill("#plan-vllm-command", COMMAND)
    page.select_option("#plan-vllm-version", "0.24.0")
    page.click("#plan-run")
    _, old = cli_json("plan", "--engine", "vllm", "--engine-version", "0.24.0", "--json", "--gpu", "h200", "-L",
                      "262144", "-C", "8", "--", *COMMAND.split())
    tokens = old["best"]["kv_cache_tokens"]
    assert old["engine_version"] == "0.24.0" and tokens != expected["best"]["kv_cache_tokens"]
    page.wait_for_selector(f'#plan-vllm-figures [data-key="kv_cache_tokens"][data-value="{tokens}"]')
    assert page.inner_text("#plan-command") == old["command"]
    assert "pver=0.24.0" in page.url
    # its Explain link models the same release: the same KV tokens
    page.click("#plan-command-explain")
    page.wait_for_selector(f'#explain-vllm-pool [data-key="kv_cache_tokens"][data-value="{tokens}"]')
    assert page.input_value("#explain-vllm-version") == "0.24.0" and "vver=0.24.0" in page.url
    # and the link reproduces it: the release is one of the page's own keys, not a dropped pick
    page.goto(page.url)
    page.wait_for_function("document.getElementById('explain-vllm-version').value === '0.24.0'")
    assert "vver" not in page.inner_text("#link-notes") and "vver=0.24.0" in page.url
