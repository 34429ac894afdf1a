"""The Explain panel in headless Chromium: paste a command, read the figures, which equal `explain --json`."""

from __future__ import annotations

import shlex
from urllib.parse import quote

import pytest

pytestmark = pytest.mark.browser

COMMAND = ("python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B --mem-fraction-static 0.85 "
           "--speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark")
BUDGET = "66.5"
FIGURES = ("slots_per_request", "draft_states_per_request", "state_bytes_per_slot", "kv_bytes_per_token",
           "max_mamba_cache_size", "state_pool_bytes", "spec_scratch_bytes", "kv_budget_bytes", "max_total_num_tokens",
           "max_running_requests")


def _figure(pg, key: str) -> int:
    return int(pg.locator(f'#explain-out [data-key="{key}"]').get_attribute("data-value"))


def test_explain_shows_the_cli_numbers(page, cli_json, screenshot):
    page.goto(page.base + "/")
    page.fill("#explain-command", COMMAND)
    page.fill("#explain-budget", BUDGET)
    page.click("#explain-run")
    page.wait_for_selector('#explain-out [data-key="max_running_requests"]')
    code, expected = cli_json("explain", "--json", "--pool-budget-gib", BUDGET, "--", *shlex.split(COMMAND))
    assert code == 0
    for key in FIGURES:
        assert _figure(page, key) == expected[key], key
    shown = page.inner_text("#explain-out")
    assert f"{expected['max_total_num_tokens']:,}" in shown
    assert page.inner_text("#explain-log-lines").splitlines() == expected["log_lines"]
    for w in expected["warnings"]:
        assert w in page.inner_text("#explain-warnings")
    binding = page.locator("#explain-limits tr.binding")
    assert binding.count() == 1 and binding.get_attribute("data-limit") in expected["limits"]
    # provenance on hover/focus
    assert "mamba_cache_per_req" in page.get_attribute('#explain-out [data-key="state_bytes_per_slot"]', "title")
    # the URL now reproduces the page
    assert "cmd=" in page.url and "budget=66.5" in page.url
    screenshot(page, "explain")


def test_link_reproduces_and_refusal_shows_inline(page):
    cmd = "python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B-FP8"
    page.goto(page.base + f"/?cmd={quote(cmd)}&budget=-7.96")
    page.wait_for_selector("#explain-error:not([hidden])")
    assert page.input_value("#explain-command") == cmd
    err = page.inner_text("#explain-error")
    assert "engine would refuse to start" in err and "Not enough GPU memory" in err
    assert "Traceback" not in page.content()
    assert _figure(page, "state_bytes_per_slot") == 153_944_064  # the figures that need no budget still show


def test_bad_input_is_one_inline_line(page):
    page.goto(page.base + "/")
    page.fill("#explain-command", "--model-path nowhere/none")
    page.keyboard.press("Tab")
    page.focus("#explain-command")
    page.keyboard.press("Control+Enter")  # keyboard submit
    page.wait_for_selector("#explain-command-err:not([hidden])")  # next to the field it is about
    assert "not found" in page.inner_text("#explain-command-err")
    assert page.get_attribute("#explain-command", "aria-invalid") == "true"
    assert "explain-command-err" in page.get_attribute("#explain-command", "aria-describedby")
    assert page.inner_text("#explain-out") == ""
    # fixed: the error goes
    page.fill("#explain-command", COMMAND)
    page.keyboard.press("Control+Enter")
    page.wait_for_selector('#explain-out [data-key="kv_bytes_per_token"]')
    assert page.locator("#explain-command-err").is_hidden()
    assert page.get_attribute("#explain-command", "aria-invalid") is None


def test_theme_toggle_switches_and_persists(page, screenshot):
    page.goto(page.base + "/")
    page.focus("#theme-toggle")
    page.keyboard.press("Enter")
    assert page.get_attribute("html", "data-theme") == "light"
    page.keyboard.press("Enter")
    assert page.get_attribute("html", "data-theme") == "dark"
    bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.reload()
    assert page.get_attribute("html", "data-theme") == "dark"
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == bg == "rgb(17, 20, 24)"
    page.fill("#explain-command", COMMAND)
    page.click("#explain-run")
    page.wait_for_selector('#explain-out [data-key="kv_bytes_per_token"]')
    screenshot(page, "explain-dark")


def test_boot_log_is_held_against_the_model(page, cli_json, screenshot):
    from pathlib import Path

    log = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "qwen3.5-9b-tp2-rtx4090.log"
    cmd = ("python -m sglang.launch_server --model-path Qwen/Qwen3.5-9B --tp-size 2 --mem-fraction-static 0.8 "
           "--context-length 262144")
    _, expected = cli_json("logs", "check", "--json", str(log), "--", *shlex.split(cmd))
    page.goto(page.base + "/")
    page.fill("#explain-command", cmd)
    page.click("#explain-log-box summary")
    page.fill("#explain-log", log.read_text())
    page.click("#explain-run")
    page.wait_for_selector("#logcheck-rows")
    for row in expected["rows"]:
        cells = page.locator(f'#logcheck-rows tr[data-quantity="{row["quantity"]}"] td').all_inner_texts()
        assert cells[3] == row["rule"]
        if isinstance(row["observed"], int):
            assert cells[1] == f"{row['observed']:,}"
    assert _figure(page, "state_bytes_per_slot") > 0  # explain ran alongside
    verdict = page.inner_text("#logcheck-verdict")
    assert ("Every difference is explained" in verdict) == expected["explained"]
    screenshot(page, "explain-boot-log")
