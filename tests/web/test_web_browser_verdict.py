"""One verdict shown everywhere (issue 26, item 3): the web Explain, Plan, Memory picture and Compare show the CLI's
verdict, phase, confidence, evidence and what to change, from the payload's own `verdict` object, with one
capture-need figure; and the same selection gives the same numbers in Deploy, Calculator, Memory, Plan, Explain,
Compare and the CLI."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from golden_cases import SGL_DSPARK

pytestmark = pytest.mark.browser


def _value(pg, selector: str) -> str:
    return pg.locator(selector).get_attribute("data-value")


def _verdict_is(page, box: str, v: dict) -> None:
    """The verdict block `box` shows verdict `v`: serves and phase, why, each figure's exact value, the confidence
    level and its evidence."""
    assert page.get_attribute(f"#{box}", "data-serves") == str(v["serves"]).lower()
    assert page.get_attribute(f"#{box}", "data-phase") == (v["phase"] or "")
    assert v["why"] in page.inner_text(f"#{box}-line")
    for key in ("capture_need_gib", "serve_need_gib", "slack_gib", "num_blocks", "max_num_seqs"):
        if v.get(key) is not None:
            assert _value(page, f'#{box} [data-key="verdict-{key}"]') == str(v[key]), key
    conf = v["confidence"]
    assert page.get_attribute(f"#{box}-confidence", "data-level") == conf["level"]
    assert page.locator(f"#{box}-evidence li").evaluate_all("els => els.map(e => e.textContent)") == conf["basis"]


def test_explain_shows_the_clis_verdict_and_one_capture_need(page, cli_json):
    """The README's DSpark command on an RTX 5090: the CLI's verdict (fails at graph capture, 4.23 GiB), its
    confidence and evidence, and the warning that says what to change, with no other capture-need figure."""
    page.goto(page.base + f"/?cmd={quote(SGL_DSPARK)}&egpu=rtx5090")
    page.wait_for_selector("#explain-verdict")
    code, expected = cli_json("explain", "--json", "--gpu", "rtx5090", "--", SGL_DSPARK)
    assert code == 0
    v = expected["memory"]["verdict"]
    _verdict_is(page, "explain-verdict", v)
    assert "4.23 GiB" in page.inner_text("#explain-verdict-line")
    assert page.locator("#explain-verdict-fix li").all_inner_texts() == expected["memory"]["warnings"]
    assert "5.59" not in page.inner_text("#explain-out")


def test_vllm_plan_shows_the_verdict_and_startup_checks(page, cli_json):
    """Plan on vLLM: the verdict and every startup check on the planned launch, as the CLI's plan gives them."""
    launch = "vllm serve Qwen/Qwen3.8-27B --gpu-memory-utilization 0.9"
    page.goto(page.base + f"/?pe=vllm&pcmd={quote(launch)}&pg=h100-80gb&pL=32000&pC=8")
    page.wait_for_selector("#plan-verdict")
    code, expected = cli_json("plan", "--json", "--engine", "vllm", "--gpu", "h100-80gb", "-L", "32000", "-C", "8",
                              "--", launch)
    assert code == 0
    _verdict_is(page, "plan-verdict", expected["verdict"])
    assert page.locator("#plan-verdict-checks tbody tr").evaluate_all("rows => rows.map(r => r.dataset.phase)") == \
        [c["phase"] for c in expected["checks"]]


def _deploy_numbers(page) -> dict[str, str]:
    """What each panel says the Deploy command serves on the Deploy card, by panel."""
    return {
        "calculator": page.input_value("#calc-C"),
        "memory": _value(page, '#memory-pools [data-key="max_running_requests"]'),
        "plan": _value(page, '#plan-figures [data-key="max_running_requests"]'),
        "compare": _value(page, '#compare-table tr[data-key="running_cap"] td[data-engine="sglang"]'),
        "compare at L": _value(page, '#compare-table tr[data-key="requests_at_length"] td[data-engine="sglang"]'),
    }


@pytest.mark.parametrize("link,served", [("/", 102), ("/?hw=rtx5090&spec=dflash", None)])
def test_one_selection_gives_the_same_numbers_in_every_panel_and_the_cli(page, cli_json, link, served):
    """The default H200 FP8 selection (Compare said 59 where the others say 102: it dropped the recipe's ratio) and
    the RTX 5090 DFlash2 cell (it also dropped speculative decoding): Calculator, Memory, Plan, Compare, Explain and
    `explain --json` on the Deploy command give the same requests, KV tokens and graph-capture need, and Compare's
    SGLang launch is the Deploy command itself."""
    page.goto(page.base + link)
    for sel in ('#compare-table [data-key="requests_at_length"]', '#plan-figures [data-key="max_running_requests"]',
                '#memory-pools [data-key="max_running_requests"]', "#calc-answer"):
        page.wait_for_selector(sel)
    command = page.input_value("#compare-command")
    deploy = " ".join(page.inner_text("#deploy-command").replace("\\\n", " ").split())
    assert " ".join(command.replace("\\\n", " ").split()) == deploy  # Compare runs the Deploy command itself
    gpu = page.input_value("#compare-gpu")
    code, cli = cli_json("explain", "--json", "--gpu", gpu, "--engine-version", "1cf2b8c", "--", command)
    assert code == 0
    numbers = _deploy_numbers(page)
    assert set(numbers.values()) == {str(cli["max_running_requests"])}, numbers
    if served is not None:
        assert cli["max_running_requests"] == served
    kv = {_value(page, '#memory-pools [data-key="max_total_num_tokens"]'),
          _value(page, '#compare-table tr[data-key="kv_tokens"] td[data-engine="sglang"]')}
    assert kv == {str(cli["max_total_num_tokens"])}
    need = {_value(page, f'#{box} [data-key="verdict-capture_need_gib"]') for box in ("memory-verdict", "compare-verdict-sglang")}
    assert need == {str(cli["memory"]["verdict"]["capture_need_gib"])}
    for flag in ("--mamba-full-memory-ratio", *(["--speculative-algorithm DFLASH"] if "dflash" in link else [])):
        assert flag in page.inner_text("#compare-sglang-command") and flag in deploy
    if "dflash" in link:  # vLLM is not modelled with a draft checkpoint: it says so rather than dropping it silently
        assert any(t.startswith("speculative decoding (dflash") for t in
                   page.locator("#compare-not-carried-vllm li").all_inner_texts())
    # Explain, opened from Deploy, on the same card: the same verdict and numbers
    page.click("#deploy-explain")
    page.wait_for_selector("#explain-verdict")
    assert _value(page, '#explain-out [data-key="max_running_requests"]') == str(cli["max_running_requests"])
    _verdict_is(page, "explain-verdict", cli["memory"]["verdict"])
    _verdict_is(page, "memory-verdict", cli["memory"]["verdict"])
