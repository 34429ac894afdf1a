"""The boot-log box on vLLM in headless Chromium: club-3090#652's real boot excerpt shows the numbers of
`logs check --engine vllm --json` on its card, and a vLLM log pasted under SGLang is named, not sent."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

LOG_652 = Path(__file__).resolve().parents[1] / "fixtures" / "vllm" / "club3090-652-rtx5090.log"
# https://github.com/noonghunna/club-3090/issues/652 (RTX 5090), an excerpt; its model path mapped to the catalog id


def _cells(pg, quantity: str) -> list[str]:
    return pg.locator(f'#logcheck-rows tr[data-quantity="{quantity}"] td').all_inner_texts()


def test_vllm_log_shows_the_cli_numbers_on_its_card(page, cli_json, screenshot):
    code, expected = cli_json("logs", "check", "--engine", "vllm", "--gpu", "rtx5090", "--json", str(LOG_652))
    assert code == 0 and expected["explained"]
    page.goto(page.base + "/")
    page.click('#explain-engine [data-engine="vllm"]')
    page.click("#explain-log-box summary")
    assert page.locator("#explain-log-about-vllm").is_visible() and page.locator("#explain-log-version-label").is_hidden()
    page.fill("#explain-log", LOG_652.read_text())
    page.select_option("#explain-gpu", "rtx5090")
    page.click("#explain-run")  # no command: the log's own non-default args line is the launch
    page.wait_for_selector("#logcheck-rows")
    assert [r.get_attribute("data-quantity") for r in page.locator("#logcheck-rows tbody tr").all()] == [
        c["quantity"] for c in expected["checks"]]
    for c in expected["checks"]:
        row = page.locator(f'#logcheck-rows tr[data-quantity="{c["quantity"]}"]')
        assert row.locator("td").nth(1).get_attribute("data-value") == _json(c["logged"])
        assert row.locator("td").nth(2).get_attribute("data-value") == _json(c["predicted"])
    assert _cells(page, "kv_cache_tokens")[1:] == ["569,878 tokens", "569,878 tokens", "predicted"]
    assert _cells(page, "max_concurrency")[1:] == ["4.35x", "4.35x", "predicted"]
    about = page.inner_text("#logcheck-vllm-about")
    assert "release 0.24.0" in about and "vLLM 0.24.0 model on sm120" in about and "6.01 GiB" in about
    assert page.get_attribute('#logcheck-vllm-figures [data-key="state_pages_per_request"]', "data-value") == str(
        expected["state_pages_per_request"])
    assert "Every logged number is predicted" in page.inner_text("#logcheck-verdict")
    assert page.inner_text("#explain-out") == "" and "eng=vllm" in page.url and "egpu=rtx5090" in page.url
    screenshot(page, "explain-vllm-boot-log")


def test_vllm_log_under_sglang_is_named_then_checked_as_vllm(page, cli_json):
    """Under SGLang the log is not sent (no SGLang error about it); one click checks it as vLLM. Without a card the
    log's own 0.24.0 is modelled on sm90: still the CLI's numbers."""
    _, expected = cli_json("logs", "check", "--engine", "vllm", "--json", str(LOG_652))
    page.goto(page.base + "/")
    page.fill("#explain-command", "python -m sglang.launch_server --model-path Qwen/Qwen3.5-9B")
    page.click("#explain-log-box summary")
    page.fill("#explain-log", LOG_652.read_text())
    page.click("#explain-run")
    page.wait_for_selector("#logcheck-engine:not([hidden])")
    note = page.inner_text("#logcheck-engine")
    assert note.startswith("This is a vLLM boot log") and "Explain is on SGLang" in note and "\n" not in note.strip()
    assert page.locator("#logcheck-error").is_hidden() and page.inner_text("#logcheck-out") == ""
    page.click("#logcheck-switch")
    page.wait_for_selector("#logcheck-rows")
    assert page.get_attribute('#explain-engine [data-engine="vllm"]', "aria-checked") == "true"
    assert page.locator("#logcheck-engine").is_hidden()
    tokens = next(c for c in expected["checks"] if c["quantity"] == "kv_cache_tokens")
    assert _cells(page, "kv_cache_tokens")[1] == f"{tokens['logged']:,} tokens"
    assert "on sm90 (no GPU picked)" in page.inner_text("#logcheck-vllm-about")
    # a vLLM log without its memory line: nothing compared (never a pass), the line it lacks named, no stale table
    cut = "".join(line for line in LOG_652.read_text().splitlines(True) if "Available KV cache memory" not in line)
    page.fill("#explain-log", cut)
    page.click("#explain-run")
    page.wait_for_selector("#logcheck-missing")
    assert page.locator("#logcheck-error").is_hidden() and page.locator("#logcheck-rows").count() == 0
    assert "Available KV cache memory" in page.inner_text("#logcheck-missing")
    assert page.inner_text("#logcheck-verdict").startswith("Nothing compared")


def _json(v) -> str:
    import json

    return json.dumps(v, separators=(",", ":"))


def test_vllm_memory_summary_and_card_alone_estimate_match_the_cli(page, cli_json):
    """club-3090#1087's startup summaries (no args line: the launch is typed): the requested memory and the smallest
    worker's KV memory rows, and the card-alone timeline beside the boot, as `logs check --engine vllm --json`."""
    log = LOG_652.parent / "club3090-1087-2x5090-memory.log"
    launch = ("vllm serve Qwen/Qwen3.8-27B-FP8 --quantization fp8 -tp 2 --max-model-len 262144 "
              "--gpu-memory-utilization 0.92 --max-num-seqs 2 --max-num-batched-tokens 8192 --kv-cache-dtype fp8 "
              "--enable-prefix-caching")
    code, expected = cli_json("logs", "check", "--engine", "vllm", "--gpu", "rtx5090", "--json", str(log), "--", launch)
    assert code == 0
    page.goto(page.base + "/")
    page.click('#explain-engine [data-engine="vllm"]')
    page.fill("#explain-command", launch)
    page.click("#explain-log-box summary")
    page.fill("#explain-log", log.read_text())
    page.select_option("#explain-gpu", "rtx5090")
    page.click("#explain-run")
    page.wait_for_selector("#logcheck-vllm-estimates")
    assert _cells(page, "kv_cache_memory_gib")[1:] == ["12.24 GiB", "12.24 GiB", "predicted"]
    assert _cells(page, "requested_gib")[1:] == ["28.88 GiB", "28.88 GiB / 28.89 GiB", "predicted"]
    for t in expected["memory"]["estimates"]["terms"]:
        row = page.locator(f'#logcheck-vllm-estimates tr[data-term="{t["term"]}"] td')
        assert row.nth(1).get_attribute("data-value") == str(t["estimate_gib"])
        assert row.nth(2).get_attribute("data-value") == ("" if t["logged_gib"] is None else str(t["logged_gib"]))
