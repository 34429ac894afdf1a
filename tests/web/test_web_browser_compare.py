"""The engine selector and the side-by-side view in headless Chromium: the vLLM Explain figures equal
`explain --engine vllm --json`, and the Compare table equals `compare --json` for the Deploy model, card and L."""

from __future__ import annotations

import shlex
from urllib.parse import quote

import pytest

pytestmark = pytest.mark.browser

# a launch that starts on 40 GiB of KV memory; at the H200's default max_num_seqs (1024) vLLM refuses it (one Mamba cache
# block per decode sequence under full CUDA graphs; 787 blocks), which VLLM_REFUSED launches
VLLM = "vllm serve Qwen/Qwen3.8-27B --max-model-len 32768 --max-num-seqs 256"
VLLM_REFUSED = "vllm serve Qwen/Qwen3.8-27B --max-model-len 32768"


def _value(pg, selector: str) -> str:
    return pg.locator(selector).get_attribute("data-value")


def test_vllm_selector_shows_the_cli_numbers(page, cli_json):
    page.goto(page.base + "/")
    page.click('#explain-engine [data-engine="vllm"]')
    assert page.locator("#explain-version-label").is_hidden() and page.locator("#explain-log-version-label").is_hidden()
    assert "Available KV cache memory" in page.inner_text("#explain-budget-label")
    page.fill("#explain-command", VLLM_REFUSED)
    page.fill("#explain-budget", "40")
    page.select_option("#explain-gpu", "h200")
    page.click("#explain-run")
    page.wait_for_selector('#explain-out [data-key="kv_cache_tokens"]')
    code, expected = cli_json("explain", "--json", "--engine", "vllm", "--kv-memory-gib", "40", "--gpu", "h200", "--",
                              *shlex.split(VLLM_REFUSED))
    assert code == 3  # vLLM refuses: 1,024 sequences under full CUDA graphs, fewer Mamba cache blocks
    for key in ("block_size", "bytes_per_block", "blocks_per_request", "state_pages_per_request", "num_blocks",
                "kv_cache_tokens", "available_kv_memory_bytes"):
        assert int(_value(page, f'#explain-out [data-key="{key}"]')) == expected[key], key
    # the verdict: vLLM's own message with its block count, the blocks, and every startup check in its order
    verdict = page.locator("#explain-verdict")
    assert (verdict.get_attribute("data-serves"), verdict.get_attribute("data-phase")) == ("false", "cuda_graph")
    assert expected["error"]["message"] in page.inner_text("#explain-verdict-message")
    assert f"Mamba cache blocks ({expected['num_blocks']})" in page.inner_text("#explain-verdict-message")
    assert int(_value(page, '#explain-verdict [data-key="verdict-num_blocks"]')) == expected["verdict"]["num_blocks"]
    assert page.locator("#explain-verdict-checks tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.phase, r.dataset.passed])") == \
        [[c["phase"], str(c["passed"]).lower() if c["passed"] is not None else "null"] for c in expected["checks"]]
    assert page.get_attribute("#explain-verdict-confidence", "data-level") == expected["verdict"]["confidence"]["level"]
    assert float(_value(page, '#explain-out [data-key="max_concurrency"]')) == expected["max_concurrency"]
    assert page.inner_text("#explain-log-lines").splitlines() == expected["predicted_lines"]
    assert page.locator("#explain-vllm-groups tbody tr").count() == len(expected["groups"])
    assert "get_kv_cache_capacity" in page.get_attribute('#explain-out [data-key="kv_cache_tokens"]', "title")
    assert "eng=vllm" in page.url and "budget=40" in page.url
    # the link reproduces the vLLM view; back to SGLang restores its inputs
    page.goto(page.url)
    page.wait_for_selector('#explain-out [data-key="kv_cache_tokens"]')
    assert page.get_attribute('#explain-engine [data-engine="vllm"]', "aria-checked") == "true"
    page.click('#explain-engine [data-engine="sglang"]')
    assert page.locator("#explain-version-label").is_visible() and "eng=" not in page.url
    assert page.inner_text("#explain-out") == ""


def test_vllm_bad_memory_is_one_line_on_its_field(page):
    page.goto(page.base + f"/?eng=vllm&cmd={quote(VLLM)}&budget=0")
    page.wait_for_selector("#explain-budget-err:not([hidden])")
    assert page.inner_text("#explain-budget-err").startswith("kv_memory_gib: ")
    assert "Traceback" not in page.content()


def test_compare_follows_the_deploy_selection_with_the_cli_numbers(page, cli_json, screenshot):
    """Compare runs the Deploy command itself on SGLang (its ratio kept: the 102 requests Memory and Plan say, not
    the 57-59 the model's defaults gave) and what vLLM shares of it, each engine on the Deploy card: the CLI's
    `compare -- <command>` for the same selection, verdicts and why included."""
    page.goto(page.base + "/")
    page.wait_for_selector('#compare-table [data-key="requests_at_length"]')
    command, gpu, length = (page.input_value(f"#compare-{k}") for k in ("command", "gpu", "L"))
    assert command and gpu and page.input_value("#compare-memory") == "" and page.is_disabled("#compare-model")
    code, expected = cli_json("compare", "--json", "--gpu", gpu, "-L", length, "--sglang-version", "1cf2b8c", "--",
                              command)
    assert code == 0
    for key, s_key, v_key in (("requests_at_length", "requests_at_length", "requests_at_length"),
                              ("kv_tokens", "kv_tokens", "kv_tokens"), ("state", "state_slots", "state_pages_per_request"),
                              ("state_bytes_per_request", "state_bytes_per_request", "state_bytes_per_request"),
                              ("running_cap", "max_running_requests", "max_num_seqs")):
        row = f'#compare-table tr[data-key="{key}"]'
        assert _value(page, row + ' td[data-engine="sglang"]') == str(expected["sglang"][s_key]), key
        assert _value(page, row + ' td[data-engine="vllm"]') == str(expected["vllm"][v_key]), key
    for engine in ("sglang", "vllm"):
        v = expected[engine]["verdict"]
        assert _value(page, f'#compare-table tr[data-key="verdict"] td[data-engine="{engine}"]') == str(v["serves"]).lower()
        assert page.get_attribute(f"#compare-verdict-{engine}-confidence", "data-level") == v["confidence"]["level"]
    assert _value(page, '#compare-table tr[data-key="running_cap"] td[data-engine="sglang"]') == \
        _value(page, '#memory-pools [data-key="max_running_requests"]')
    assert page.locator("#compare-why li").all_inner_texts() == expected["why"]
    assert page.inner_text("#compare-vllm-command") == expected["vllm"]["command"]
    assert page.locator("#compare-not-carried-vllm li").all_inner_texts() == expected["vllm"]["launch"]["not_carried"]
    screenshot(page, "compare")
    # the vLLM command opens in Explain on vLLM on the same card: the tokens it logs are the table's
    page.click("#compare-vllm-command-explain")
    page.wait_for_selector('#explain-vllm-pool [data-key="kv_cache_tokens"]')
    assert int(_value(page, '#explain-vllm-pool [data-key="kv_cache_tokens"]')) == expected["vllm"]["kv_tokens"]


def test_compare_fields_detach_and_the_link_keeps_them(page, cli_json):
    page.goto(page.base + "/")
    page.wait_for_selector('#compare-table [data-key="kv_tokens"]')
    page.fill("#compare-command", "")  # the model at each engine's defaults
    page.fill("#compare-memory", "12.5")
    page.fill("#compare-L", "8192")
    page.fill("#compare-model", "Qwen/Qwen3.5-9B")
    page.select_option("#compare-kv", "fp8")
    page.click("#compare-run")
    page.wait_for_selector("#compare-table caption:has-text('Qwen/Qwen3.5-9B')")
    assert "cmem=12.5" in page.url and "ckv=fp8" in page.url and not page.locator("#compare-refollow").is_hidden()
    gpu = page.input_value("#compare-gpu")
    code, expected = cli_json("compare", "--json", "--model", "Qwen/Qwen3.5-9B", "--memory-gib", "12.5", "-L", "8192",
                              "--kv-cache-dtype", "fp8", *(["--gpu", gpu] if gpu else []))
    assert code == 0
    assert _value(page, '#compare-table tr[data-key="kv_tokens"] td[data-engine="vllm"]') == str(expected["vllm"]["kv_tokens"])
    page.goto(page.url)
    page.wait_for_selector("#compare-table caption:has-text('Qwen/Qwen3.5-9B')")
    assert page.input_value("#compare-memory") == "12.5"
    # a bad field is one line on that field
    page.fill("#compare-L", "0")
    page.click("#compare-run")
    assert page.inner_text("#compare-L-err").startswith("L: a whole number")


def test_compare_on_the_card_alone_when_the_memory_is_empty(page, cli_json):
    """An empty cache memory with a GPU chosen: each engine's own memory on the card, the CLI's numbers and sources;
    with no GPU either, one line on the memory field."""
    page.goto(page.base + "/")
    page.wait_for_selector('#compare-table [data-key="kv_tokens"]')
    page.fill("#compare-command", "")
    page.fill("#compare-model", "Qwen/Qwen3.6-35B-A3B")
    page.select_option("#compare-gpu", "h200")
    page.fill("#compare-L", "131072")
    page.fill("#compare-tp", "1")
    page.select_option("#compare-kv", "auto")
    page.fill("#compare-memory", "")
    page.click("#compare-run")
    page.wait_for_selector("#compare-table caption:has-text('each engine')")
    code, expected = cli_json("compare", "--json", "--model", "Qwen/Qwen3.6-35B-A3B", "--gpu", "h200", "-L", "131072")
    assert code == 0 and "cmem=" not in page.url
    for engine in ("sglang", "vllm"):
        row = f'#compare-table tr[data-key="{{}}"] td[data-engine="{engine}"]'
        assert _value(page, row.format("cache_memory_gib")) == str(expected[engine]["cache_memory_gib"])
        assert _value(page, row.format("kv_tokens")) == str(expected[engine]["kv_tokens"])
        assert expected[engine]["memory_source"] in page.inner_text(row.format("cache_memory_gib"))
    page.select_option("#compare-gpu", "")
    page.click("#compare-run")
    assert page.inner_text("#compare-memory-err").startswith("cache memory: a number of GiB per rank, or choose a GPU")


def test_engine_selector_is_one_radio_group_for_the_keyboard(page):
    page.goto(page.base + "/")
    page.focus('#explain-engine [data-engine="sglang"]')
    page.keyboard.press("ArrowRight")
    vllm = page.locator('#explain-engine [data-engine="vllm"]')
    assert vllm.get_attribute("aria-checked") == "true" and vllm.get_attribute("tabindex") == "0"
    assert page.evaluate("document.activeElement.dataset.engine") == "vllm"
    assert page.get_attribute("#explain-budget", "name") == "kv_memory_gib"
    assert "eng=vllm" in page.url


def test_a_deploy_model_vllm_does_not_model_is_said_beside_sglangs_answer(page, client):
    """Kimi K3 on its page: vLLM's engine model does not cover it; SGLang's side still answers (the Deploy command on
    the card) and vLLM's column says why it has none, as the API does."""
    page.goto(page.base + "/?page=kimi-k3&hw=gb300")
    page.wait_for_selector("#compare-unmodelled-vllm")
    body = {"command": page.input_value("#compare-command"), "gpu": page.input_value("#compare-gpu"),
            "request_length": int(page.input_value("#compare-L"))}
    got = client.post("/api/compare", json=body).json()
    assert got["vllm"]["modelled"] is False and got["vllm"]["error"]["message"] in page.inner_text("#compare-unmodelled-vllm")
    assert _value(page, '#compare-table tr[data-key="verdict"] td[data-engine="sglang"]') == \
        str(got["sglang"]["verdict"]["serves"]).lower()
    assert page.locator("#compare-error").is_hidden()


def test_vllm_on_a_card_alone_shows_the_cli_timeline(page, cli_json):
    """No boot log: the card's memory timeline gives the available KV memory, as `explain --engine vllm --gpu`."""
    page.goto(page.base + f"/?eng=vllm&egpu=h200&cmd={quote(VLLM)}")
    page.wait_for_selector('#explain-vllm-pool [data-key="kv_cache_tokens"]')
    code, expected = cli_json("explain", "--json", "--engine", "vllm", "--gpu", "h200", "--", *shlex.split(VLLM))
    assert code == 0 and expected["memory"]["source"] == "card"
    assert int(_value(page, '#explain-out [data-key="kv_cache_tokens"]')) == expected["kv_cache_tokens"]
    assert int(_value(page, '#explain-out [data-key="available_kv_memory_bytes"]')) == expected["available_kv_memory_bytes"]
    steps = page.locator("#explain-memory tr[data-step]").evaluate_all("rows => rows.map(r => r.dataset.step)")
    assert steps == list(expected["memory"]["timeline"])
    assert "determine_available_memory" in page.get_attribute(
        '#explain-out [data-key="available_kv_memory_bytes"]', "title")


def test_compare_shows_each_engines_answer_when_one_cannot_start(page, cli_json):
    """The issue's H100 example, where compare aborted with SGLang's refusal: the page shows SGLang's verdict (the
    state pool), the engine's message and its cheapest change with a command to open in Explain, beside vLLM's
    numbers and verdict, as `compare --json -- <launch>` gives them."""
    launch = "python -m sglang.launch_server --model-path Qwen/Qwen3.5-35B-A3B --context-length 32768"
    page.goto(page.base + f"/?ccmd={quote(launch)}&cg=h100-80gb&cL=32768")
    page.wait_for_selector("#compare-verdict-sglang")
    code, expected = cli_json("compare", "--json", "--gpu", "h100-80gb", "-L", "32768", "--", launch)
    assert code == 0
    s, v = expected["sglang"], expected["vllm"]
    assert _value(page, '#compare-table tr[data-key="verdict"] td[data-engine="sglang"]') == "false"
    assert page.get_attribute("#compare-verdict-sglang", "data-phase") == s["verdict"]["phase"] == "state_pool"
    assert s["error"]["message"] in page.inner_text("#compare-verdict-sglang-line")
    assert _value(page, '#compare-table tr[data-key="kv_tokens"] td[data-engine="sglang"]') == ""
    assert page.inner_text("#compare-fix-sglang") == s["cheapest_change"]["command"]
    assert _value(page, '#compare-table tr[data-key="kv_tokens"] td[data-engine="vllm"]') == str(v["kv_tokens"])
    assert page.get_attribute("#compare-verdict-vllm", "data-serves") == str(v["verdict"]["serves"]).lower()
    # the cheapest change opens in Explain, where it serves
    page.click("#compare-fix-sglang-explain")
    page.wait_for_selector("#explain-verdict")
    assert page.get_attribute("#explain-verdict", "data-serves") == "true"
