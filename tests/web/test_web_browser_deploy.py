"""Deploy and Calculator in headless Chromium: select options, see a greyed option's reason, read the command and
the ratio, and check them against the CLI for the same selection."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

QWEN = "qwen3.8-27b"


def _render_cli(cli_json, selection: dict, *extra: str) -> dict:
    argv = ["cookbook", "render", QWEN, "--json", *extra]
    for dim, option in selection.items():
        argv += [f"--{dim}", option]
    code, out = cli_json(*argv)
    assert code == 0
    return out


def _selection(page) -> dict:
    """The selection the page shows: the pressed chip of each row."""
    out = {}
    for chip in page.locator('#deploy-rows .chip[aria-checked="true"]').all():
        out[chip.get_attribute("data-dim")] = chip.get_attribute("data-option")
    return out


def _wait_command(page, contains: str = "--model-path") -> str:
    page.wait_for_function(f"() => document.getElementById('deploy-command').textContent.includes({contains!r})")
    page.wait_for_selector('#calc-out [data-key="slots_per_request"]')
    return page.inner_text("#deploy-command")


def _chip(page, dim: str, option: str):
    return page.locator(f'#deploy-rows .chip[data-dim="{dim}"][data-option="{option}"]')


def test_default_selection_is_the_cli_render(page, cli_json):
    page.goto(page.base + f"/?page={QWEN}")
    command = _wait_command(page)
    expected = _render_cli(cli_json, {})
    assert command == expected["command"]
    assert _selection(page) == expected["selection"]
    assert page.get_attribute("#deploy-badge", "data-badge") == expected["badge"]
    assert page.inner_text("#deploy-badge") == expected["badge_label"]


def test_greyed_option_shows_its_reason_and_a_reseat_note(page, cli_json, screenshot):
    page.goto(page.base + f"/?page={QWEN}&hw=h200&quant=fp8")
    _wait_command(page, "Qwen3.8-27B-FP8")
    nvfp4 = _chip(page, "quant", "nvfp4-fp4-head")
    assert nvfp4.get_attribute("aria-disabled") == "true"
    reason = "H200 (SM90) has no FP4 tensor cores; the NVFP4 checkpoints need Blackwell"
    assert nvfp4.get_attribute("title") == reason
    nvfp4.click(force=True)  # greyed chips still take the click: it explains instead of selecting
    assert reason in page.inner_text("#reason-quant")
    assert nvfp4.get_attribute("aria-checked") == "false"  # greyed: not selectable
    # RTX 5090 cannot hold FP8: the quant pick is reseated with a visible note
    _chip(page, "hw", "rtx5090").click()
    command = _wait_command(page, "NVFP4")
    note = page.locator('#deploy-reseated li[data-dim="quant"]')
    assert note.count() == 1 and "moved from FP8" in note.inner_text()
    expected = _render_cli(cli_json, {"hw": "rtx5090", "quant": "fp8"})
    assert command == expected["command"]
    assert expected["reseated"][0]["reason"] in note.inner_text()
    screenshot(page, "deploy-reseated")


def test_calculator_repins_the_ratio_and_equals_the_cli(page, cli_json, screenshot):
    page.goto(page.base + f"/?page={QWEN}&hw=rtx5090&quant=nvfp4-fp4-head&spec=dflash")
    _wait_command(page, "DFLASH")
    page.fill("#calc-L", "9216")
    page.fill("#calc-C", "1")
    page.wait_for_function("() => location.search.includes('L=9216') && location.search.includes('C=1')")
    page.wait_for_function("() => document.querySelector('#calc-out [data-key=\"max_mamba_cache_size_pin\"]')"
                           " && document.querySelector('#calc-out [data-key=\"max_mamba_cache_size_pin\"]')"
                           ".getAttribute('data-value') === '5'")
    page.wait_for_selector('#calc-out [data-key="pinned_ratio"]:has-text("L = 9,216")')
    command = page.inner_text("#deploy-command")
    code, q = cli_json("ratio", "--json", "-L", "9216", "-C", "1", "--gpu", "rtx5090", "--", command)
    assert code == 0
    pinned = page.get_attribute('#calc-out [data-key="pinned_ratio"]', "data-value")
    shown = page.inner_text('#calc-out [data-key="pinned_ratio"] .v')
    assert f"--mamba-full-memory-ratio {shown}" in command
    assert float(pinned) == pytest.approx(q["continuous_ratio"])
    for key in ("slots_per_request", "draft_states_per_request", "state_bytes_per_slot", "kv_bytes_per_token",
                "max_mamba_cache_size_pin"):
        assert int(page.get_attribute(f'#calc-out [data-key="{key}"]', "data-value")) == q[key], key
    exact = page.locator('#calc-out [data-key="exact_ratio"]')
    if q["mamba_full_memory_ratio"] is None:
        # DFLASH2 on a 5090 at C = 1: the exact search finds no ratio, but the command carries the formula's balanced
        # ratio and is capped at one request: "no ratio balances" beside it would contradict it
        assert exact.count() == 0 and "no ratio balances" not in page.inner_text("#calc-out")
        assert "no ratio balances" in q["reason"]
    else:
        assert float(exact.get_attribute("data-value")) == pytest.approx(q["mamba_full_memory_ratio"])
    assert page.inner_text('#calc-out [data-key="pin_fits"] .v') == ("yes" if q["pin_fits"] else "no")
    # the overlays (DFLASH2) change the balanced value: the cell's own value is shown beside it
    assert page.locator("#calc-base").count() == 1
    page.click("#calc-formula summary")
    assert q["formula"]["text"] in page.inner_text("#calc-formula")
    screenshot(page, "deploy-calculator")


def test_docker_form_and_link_reproduce(page, cli_json, browser):
    page.goto(page.base + f"/?page={QWEN}&hw=h200&quant=fp8&spec=eagle")
    _wait_command(page, "EAGLE")
    page.click('#deploy-run [data-run="docker"]')
    page.wait_for_function("() => document.getElementById('deploy-command').textContent.startsWith('docker run')")
    expected = _render_cli(cli_json, _selection(page), "--docker")
    assert page.inner_text("#deploy-command") == expected["command"]
    assert "run=docker" in page.url
    for w in expected["warnings"]:
        assert w.split("[")[0] in page.inner_text("#deploy-warnings")
    other = browser.new_page()
    try:
        other.goto(page.url)
        other.wait_for_function("() => document.getElementById('deploy-command').textContent.startsWith('docker run')")
        assert other.inner_text("#deploy-command") == expected["command"]
    finally:
        other.close()


def test_keyboard_selects_a_chip_and_copy_works(page, cli_json):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(page.base + f"/?page={QWEN}&hw=h200&quant=fp8")
    _wait_command(page, "Qwen3.8-27B-FP8")
    _chip(page, "spec", "dspark").focus()
    page.keyboard.press("Enter")
    command = _wait_command(page, "DSPARK")
    expected = _render_cli(cli_json, {"hw": "h200", "quant": "fp8", "spec": "dspark"})
    assert command == expected["command"]
    page.focus("#deploy-copy")
    page.keyboard.press("Enter")
    page.wait_for_selector("#deploy-copied:has-text('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == expected["command"]


def test_a_bad_pick_in_a_link_is_dropped_alone_with_a_note(page, cli_json):
    page.goto(page.base + f"/?page={QWEN}&hw=rtx5090&quant=int3&tier=nope-nope")
    _wait_command(page, "--max-running-requests")
    notes = page.inner_text("#link-notes")
    assert "quant=int3" in notes and "not an option of Quantization" in notes and "tier=nope-nope" in notes
    assert page.inner_text("#deploy-error") == ""
    assert page.inner_text("#deploy-command") == _render_cli(cli_json, {"hw": "rtx5090"})["command"]  # hw kept
    assert "hw=rtx5090" in page.url and "int3" not in page.url


def test_an_overlay_pin_stands_beside_the_calculator_value(page, cli_json):
    """RTX 5090 + DFLASH2 + fp32 high-throughput: the overlay pins its own ratio; the base command's balanced value
    is shown beside it."""
    sel = {"hw": "rtx5090", "quant": "nvfp4-fp4-head", "spec": "dflash", "tier": "high-throughput",
           "ssm-dtype": "float32"}
    page.goto(page.base + f"/?page={QWEN}&" + "&".join(f"{k}={v}" for k, v in sel.items()))
    _wait_command(page, "DFLASH")
    expected = _render_cli(cli_json, sel)
    assert expected["ratio"]["pinned"] == "overlay"
    pinned_flag = next(f for f in expected["flags"] if f.startswith("--mamba-full-memory-ratio"))
    page.wait_for_selector('#calc-out [data-key="in_command"]')
    assert page.inner_text('#calc-out [data-key="in_command"] .v') == pinned_flag
    assert page.inner_text('#calc-out [data-key="pinned_ratio"] .v') == expected["ratio"]["base"]["text"]
    assert "overlay" in page.inner_text("#calc-status")


def test_the_badge_says_beside_it_when_the_evidence_does_not_back_it(page, screenshot):
    """A measured cell's Verified badge carries its evidence on hover and nothing beside it; a Verified cell whose
    command the engine model cannot size (Kimi-K3's NVFP4 checkpoint is not bundled) says so beside the badge."""
    page.goto(page.base + f"/?page={QWEN}")
    _wait_command(page)
    assert page.get_attribute("#deploy-badge", "title").startswith("Evidence: measured - 1 measured launch")
    assert page.is_hidden("#deploy-badge-evidence")
    page.goto(page.base + "/?page=kimi-k3&hw=b300&quant=nvfp4")
    page.wait_for_function("() => document.getElementById('deploy-command').textContent.includes('Kimi-K3-NVFP4')")
    page.wait_for_selector("#deploy-badge-evidence:not([hidden])")
    assert page.inner_text("#deploy-badge") == "Verified"
    note = page.inner_text("#deploy-badge-evidence")
    assert note.startswith("Verified by the page, but the engine model cannot size this command on NVIDIA B300")
    box, badge = page.locator("#deploy-badge-evidence").bounding_box(), page.locator("#deploy-badge").bounding_box()
    assert box is not None and badge is not None and abs(box["y"] - badge["y"]) < 60  # beside it, not below the fold
    screenshot(page, "deploy-badge-not-backed")
