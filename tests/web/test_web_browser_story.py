"""One story across panels: Deploy, Memory, Calculator and Plan say the same thing about the same command, which
equals what `explain --json` says about it; multi-node cells are analysed as node 0's command; C and L live in the
command and the URL."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = pytest.mark.browser

QWEN = "qwen3.8-27b"


def _pages(cli_json) -> list[str]:
    code, out = cli_json("cookbook", "list", "--json")
    assert code == 0
    return [p["id"] for p in out["pages"]]


def _settled(page, plan: bool = True) -> None:
    """Every panel has answered for the current state."""
    page.wait_for_selector("#memory-pools [data-key='max_running_requests']")
    page.wait_for_selector("#calc-out [data-key='slots_per_request']")
    if plan:
        page.wait_for_selector("#plan-out #plan-command, #plan-out #plan-why")
    page.wait_for_load_state("networkidle")


def _value(page, sel: str) -> str:
    return page.get_attribute(sel, "data-value")


def _analysed_command(page) -> str:
    """The command Memory and Calculator analysed: their "Open in Explain" link carries it."""
    href = page.get_attribute("#calc-command-explain", "href")
    return parse_qs(urlparse(href).query)["cmd"][0]


def _gpu(client, page_id: str, hw: str) -> str:
    layout = client.get(f"/api/pages/{page_id}").json()
    return next(h["gpu"] for h in layout["hardware"] if h["id"] == hw)


def _visible_errors(page) -> list[str]:
    return page.evaluate("""() => Array.from(document.querySelectorAll('.alert.error, .field-error'))
        .filter(e => !e.hidden && e.offsetParent !== null).map(e => e.textContent)""")


def _check_panels_agree(page, cli_json, client, page_id: str) -> None:
    _settled(page)
    assert _visible_errors(page) == []
    selection = {c.get_attribute("data-dim"): c.get_attribute("data-option")
                 for c in page.locator('#deploy-rows .chip[aria-checked="true"]').all()}
    argv = ["cookbook", "render", page_id, "--json", "--placeholder", "NODE_RANK=0"]
    for dim, option in selection.items():
        argv += [f"--{dim}", option]
    code, rendered = cli_json(*argv)
    assert code == 0
    command = _analysed_command(page)
    assert command == rendered["command"]  # node 0's view of the Deploy command, nothing else
    gpu = _gpu(client, page_id, selection["hw"])
    code, e = cli_json("explain", "--json", "--gpu", gpu, "--", command)
    assert code == 0, e
    # Memory: the pools and what the command serves
    for key in ("max_mamba_cache_size", "max_total_num_tokens", "max_running_requests"):
        assert int(_value(page, f'#memory-pools [data-key="{key}"]')) == e[key], key
    # Calculator: C starts at what the command serves, and its geometry is explain's
    assert int(page.input_value("#calc-C")) == e["max_running_requests"]
    for key in ("slots_per_request", "draft_states_per_request", "kv_bytes_per_token"):
        assert int(_value(page, f'#calc-out [data-key="{key}"]')) == e[key], key
    ring = e.get("replayssm_ring_bytes_per_request") or 0  # the formula prices the ReplaySSM ring per slot
    assert int(_value(page, '#calc-out [data-key="state_bytes_per_slot"]')) == e["state_bytes_per_slot"] + ring
    assert page.locator("#calc-ring").count() == (1 if ring else 0)
    calc = page.inner_text("#calc-out")
    if "--mamba-full-memory-ratio" in command:
        assert "no ratio balances" not in calc
        shown = page.inner_text('#calc-out [data-key="pinned_ratio"] .v')
        assert f"--mamba-full-memory-ratio {shown}" in command
    pin = e["max_running_requests"] * e["slots_per_request"]
    assert int(_value(page, '#calc-out [data-key="max_mamba_cache_size_pin"]')) >= pin
    if page.locator('#calc-out [data-key="pin_fits"]').count():
        assert page.inner_text('#calc-out [data-key="pin_fits"] .v') == "yes"  # it serves C, so C fits
    # Plan: opens on this card and workload, where something fits, and serves what its command runs
    assert page.input_value("#plan-gpu") == gpu
    assert int(page.input_value("#plan-C")) == e["max_running_requests"]
    assert page.locator("#plan-command").count() == 1, page.inner_text("#plan-out")
    plan_command = page.inner_text("#plan-command")
    serves = int(_value(page, '#plan-figures [data-key="max_running_requests"]'))
    cap = re.search(r"--max-running-requests (\d+)", plan_command)
    assert cap is None or serves <= int(cap.group(1))
    code, pe = cli_json("explain", "--json", "--gpu", gpu, "--", plan_command)
    assert code == 0 and pe["max_running_requests"] == serves


def test_every_bundled_page_tells_one_story(page, cli_json, client, screenshot):
    for page_id in _pages(cli_json):
        page.goto(page.base + f"/?page={page_id}")
        _check_panels_agree(page, cli_json, client, page_id)
        screenshot(page, f"story-{page_id}")


def test_the_page_opens_on_the_flagship(page, cli_json, client):
    page.goto(page.base + "/")
    _settled(page)
    assert page.input_value("#deploy-page") == QWEN
    assert f"page={QWEN}" in page.url
    _check_panels_agree(page, cli_json, client, QWEN)


def test_a_multi_node_cell_is_analysed_as_node_0(page, cli_json, client):
    page.goto(page.base + "/?page=kimi-k3&hw=gb300")
    _settled(page)
    assert "<node-rank>" in page.inner_text("#deploy-command")  # the user fills it in
    assert "--node-rank 0" in _analysed_command(page)
    assert "node 0" in page.inner_text("#deploy-per-node") and "node 0" in page.inner_text("#memory-about")
    _check_panels_agree(page, cli_json, client, "kimi-k3")
    # a typed node rank fills the shown command and the link; a bad one is refused beside its field
    page.click("#deploy-ph summary")
    page.fill("#ph-NODE_RANK", "x")
    assert "whole number" in page.inner_text("#ph-NODE_RANK-err")
    page.fill("#ph-NODE_RANK", "1")
    page.wait_for_function("() => document.getElementById('deploy-command').textContent.includes('--node-rank 1')")
    assert page.locator("#ph-NODE_RANK-err").is_hidden()
    assert "ph%3ANODE_RANK=1" in page.url or "ph:NODE_RANK=1" in page.url


def test_c_changes_the_command_and_is_marked(page, cli_json, client):
    page.goto(page.base + f"/?page={QWEN}")
    _settled(page)
    recipe = page.inner_text("#deploy-command")
    assert page.locator("#deploy-change").is_hidden()
    page.fill("#calc-C", "16")
    page.wait_for_selector("#deploy-change:not([hidden])")
    page.wait_for_function("() => location.search.includes('C=16')")
    _settled(page)
    changed = page.inner_text("#deploy-command")
    assert "--max-running-requests 16" in changed and "--max-running-requests" not in recipe
    assert page.locator("#deploy-command mark").all_inner_texts() == ["  --max-running-requests 16 \\"]
    assert "--max-running-requests 16" in page.inner_text("#deploy-change")
    assert "changed for C = 16" in page.inner_text("#calc-about")
    assert page.inner_text("#calc-command") == changed
    gpu = _gpu(client, QWEN, "h200")
    _, e = cli_json("explain", "--json", "--gpu", gpu, "--", _analysed_command(page))
    assert e["max_running_requests"] == 16 == int(_value(page, '#memory-pools [data-key="max_running_requests"]'))
    # the link reproduces the change; "Back to the recipe" undoes it
    other = page.context.new_page()
    other.goto(page.url)
    other.wait_for_selector("#deploy-change:not([hidden])")
    assert other.inner_text("#deploy-command") == changed
    other.close()
    page.click("#deploy-reset")
    page.wait_for_selector("#deploy-change", state="hidden")
    assert page.inner_text("#deploy-command") == recipe and "C=" not in page.url


def test_a_pinned_recipe_opens_at_its_pin(page, cli_json, client):
    """RTX 5090 serves one request at a time (--max-running-requests 1): the Calculator opens at C = 1, which fits."""
    page.goto(page.base + f"/?page={QWEN}&hw=rtx5090")
    _settled(page)
    assert "--max-running-requests 1 " in page.inner_text("#deploy-command")
    assert page.input_value("#calc-C") == "1"
    assert page.inner_text('#calc-out [data-key="pin_fits"] .v') == "yes"
    assert page.locator("#calc-pin-warning").count() == 0
    _check_panels_agree(page, cli_json, client, QWEN)


def test_l_and_c_errors_sit_by_their_field_and_go_when_fixed(page):
    page.goto(page.base + f"/?page={QWEN}")
    _settled(page)
    page.fill("#calc-C", "0")
    assert "C: a whole number" in page.inner_text("#calc-C-err")
    assert page.get_attribute("#calc-C", "aria-invalid") == "true"
    page.fill("#calc-L", "-5")
    page.fill("#calc-C", "8")
    assert page.locator("#calc-C-err").is_hidden() and page.locator("#calc-L-err").is_visible()
    page.fill("#calc-L", "4096")
    page.wait_for_function("() => location.search.includes('L=4096') && location.search.includes('C=8')")
    assert page.locator("#calc-L-err").is_hidden()


def test_bad_link_values_are_dropped_alone(page):
    page.goto(page.base + f"/?page={QWEN}&hw=h200&L=-3&C=12&run=podman&pg=tpu9&pC=7&ph%3Anot-a-key=1")
    _settled(page, plan=False)
    notes = page.inner_text("#link-notes")
    for bad in ("L=-3", "run=podman", "pg=tpu9", "ph:not-a-key=1"):
        assert bad in notes, bad
    assert page.input_value("#calc-C") == "12" and page.input_value("#plan-C") == "7"  # the good values stay
    assert "L=-3" not in page.url and "C=12" in page.url


def test_an_unknown_page_in_a_link_opens_the_flagship(page):
    page.goto(page.base + "/?page=no-such-page&hw=h200")
    _settled(page)
    assert page.input_value("#deploy-page") == QWEN
    assert "page=no-such-page" in page.inner_text("#link-notes")
