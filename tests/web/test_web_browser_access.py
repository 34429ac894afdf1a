"""Keyboard-only walks, phone and wide layouts, copy buttons, "Open in Explain", the glossary, the URL's Plan options
and log digest, and colour contrast of every text on the page in both themes."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

QWEN = "qwen3.8-27b"
LOG = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "qwen3.5-9b-tp2-rtx4090.log"


def _settled(page) -> None:
    page.wait_for_selector("#memory-pools [data-key='max_running_requests']")
    page.wait_for_selector("#calc-out [data-key='slots_per_request']")
    page.wait_for_selector("#plan-out #plan-command, #plan-out #plan-why")
    page.wait_for_load_state("networkidle")


def _focused(page) -> list:
    return page.evaluate("[document.activeElement.getAttribute('data-dim'), "
                         "document.activeElement.getAttribute('data-option'), "
                         "document.activeElement.getAttribute('aria-checked')]")


def test_arrow_keys_pick_chips_and_focus_survives_the_rerender(page):
    page.goto(page.base + f"/?page={QWEN}")
    _settled(page)
    assert page.locator('#deploy-rows [role="radiogroup"]').count() >= 5
    page.focus('#deploy-rows .chip[data-dim="hw"][aria-checked="true"]')
    assert _focused(page) == ["hw", "h200", "true"]
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # visible focus
    page.keyboard.press("ArrowLeft")  # H200 -> RTX 5090, picked at once
    page.wait_for_function("() => location.search.includes('hw=rtx5090')")
    _settled(page)
    assert _focused(page) == ["hw", "rtx5090", "true"]  # the row was rebuilt; the keyboard stays on the chip
    assert "--max-running-requests 1" in page.inner_text("#deploy-command")
    page.keyboard.press("Home")
    page.wait_for_function("() => location.search.includes('hw=gb300')")
    _settled(page)
    assert _focused(page) == ["hw", "gb300", "true"]
    # a greyed chip takes focus and says why, without being picked
    page.focus('#deploy-rows .chip[data-dim="quant"][aria-checked="true"]')
    page.goto(page.base + f"/?page={QWEN}&hw=h200&quant=fp8")
    _settled(page)
    page.focus('#deploy-rows .chip[data-dim="quant"][data-option="fp8"]')
    page.keyboard.press("ArrowRight")
    assert _focused(page)[:2] == ["quant", "nvfp4-bf16-head"]
    assert "no FP4 tensor cores" in page.inner_text("#reason-quant")
    assert "quant=fp8" in page.url
    assert page.inner_text("#status")  # the live region says what the panels now show


def test_keyboard_copies_and_opens_in_explain(page, cli_json):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(page.base + f"/?page={QWEN}")
    _settled(page)
    for button, source in (("#calc-command-copy", "#calc-command"), ("#plan-command-copy", "#plan-command"),
                           ("#deploy-copy", "#deploy-command")):
        page.focus(button)
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => navigator.clipboard.readText().then(t => t === "
                               f"document.querySelector('{source}').textContent)")
    page.focus("#plan-command-explain")
    page.keyboard.press("Enter")
    page.wait_for_selector('#explain-out [data-key="max_running_requests"]')
    plan_command = page.inner_text("#plan-command")
    assert page.input_value("#explain-command") == plan_command
    assert page.input_value("#explain-gpu") == "h200"
    _, e = cli_json("explain", "--json", "--gpu", "h200", "--", plan_command)
    assert int(page.get_attribute('#explain-out [data-key="max_running_requests"]', "data-value")) == \
        e["max_running_requests"]
    assert "cmd=" in page.url and "egpu=h200" in page.url


def test_glossary_popovers_open_and_close_by_keyboard(page):
    page.goto(page.base + f"/?page={QWEN}")
    _settled(page)
    for key in ("S", "D", "K", "ratio", "pin"):
        button = page.locator(f'button[popovertarget="gloss-{key}"]').first
        button.focus()
        page.keyboard.press("Enter")
        assert page.locator(f"#gloss-{key}").is_visible(), key
        page.keyboard.press("Escape")
        assert page.locator(f"#gloss-{key}").is_hidden(), key


def test_numbers_are_formatted_with_the_exact_value_on_hover(page):
    page.goto(page.base + f"/?page={QWEN}")
    _settled(page)
    frac = page.locator('#plan-fraction [data-key="mem_fraction_static"]')
    raw = float(frac.get_attribute("data-value"))
    shown = frac.locator(".v").inner_text()
    assert len(shown.split(".")[1]) in (2, 3) and float(shown) == pytest.approx(raw, abs=5e-4)
    assert f"exact: {frac.get_attribute('data-value')}" in frac.get_attribute("title")
    kv = page.locator('#memory-pools [data-key="max_total_num_tokens"]')
    assert kv.locator(".v").inner_text() == f"{int(kv.get_attribute('data-value')):,} tokens"
    legend = page.locator('#memory-deploy .legend [data-segment="weights_gib"]')
    assert legend.inner_text().endswith(" GiB") and "exact:" in legend.get_attribute("title")


@pytest.mark.parametrize("width", [320, 375, 1280])
def test_no_page_level_horizontal_scroll(page, width, screenshot):
    page.set_viewport_size({"width": width, "height": 900})
    for url in (f"/?page={QWEN}", "/?page=kimi-k3&hw=gb300&run=docker", f"/?page={QWEN}&hw=rtx5090&spec=dflash"):
        page.goto(page.base + url)
        _settled(page)
        page.click("#deploy-more summary")
        page.click("#calc-command-explain")  # node 0's command of a multi-node cell
        page.wait_for_selector('#explain-out [data-key="max_running_requests"]')
        page.click("#explain-out details summary")
        width_now, inner = page.evaluate("[document.scrollingElement.scrollWidth, innerWidth]")
        assert width_now <= inner, (url, width_now, inner)
        # the command wraps in its own block and its copy button is on screen beside it
        assert page.evaluate("getComputedStyle(document.getElementById('deploy-command')).whiteSpace") == "pre-wrap"
        box = page.locator("#deploy-copy").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= inner
    screenshot(page, f"page-{width}px")


def test_plan_options_and_the_log_digest_live_in_the_url(page):
    page.goto(page.base + f"/?page={QWEN}")
    _settled(page)
    page.check("#plan-pin")
    page.fill("#plan-C", "32")
    page.click("#plan-run")
    page.wait_for_function("() => location.search.includes('ppin=1') && location.search.includes('pC=32')")
    assert "pg=h200" in page.url and "pm=" in page.url
    page.fill("#explain-command", "python -m sglang.launch_server --model-path Qwen/Qwen3.5-9B --tp-size 2 "
                                  "--mem-fraction-static 0.8 --context-length 262144")
    page.click("#explain-log-box summary")
    page.fill("#explain-log", LOG.read_text())
    page.click("#explain-run")
    page.wait_for_selector("#logcheck-rows")
    page.wait_for_function("() => /ld=sha256%3A[0-9a-f]{16}/.test(location.search)")
    assert "Load weight" not in page.url  # the digest, never the log
    link = page.url
    other = page.context.new_page()
    other.goto(link)
    other.wait_for_selector("#plan-command")
    assert other.is_checked("#plan-pin") and other.input_value("#plan-C") == "32"
    assert "paste the same log" in other.inner_text("#explain-log-digest")
    other.fill("#explain-log", LOG.read_text())
    other.click("#explain-run")
    other.wait_for_selector("#explain-log-digest:has-text(\"the link's log\")")
    other.close()


def test_an_error_never_echoes_more_than_200_characters(page):
    page.goto(page.base + "/")
    page.fill("#explain-command", "--model-path " + "x" * 5000)
    page.click("#explain-run")
    page.wait_for_selector("#explain-command-err:not([hidden])")
    assert len(page.inner_text("#explain-command-err")) <= 200


CONTRAST = """() => {
  const lum = c => { const [r, g, b] = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                     return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const rgb = s => (s.match(/[0-9.]+/g) || []).map(Number);
  const bg = e => { for (; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
                      if (c.length === 3 || c[3] > 0) return c.slice(0, 3); } return [255, 255, 255]; };
  const out = [];
  for (const e of document.querySelectorAll('body *')) {
    if (!Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    if (!e.offsetParent && getComputedStyle(e).position !== 'fixed') continue;
    const fg = rgb(getComputedStyle(e).color).slice(0, 3), back = bg(e);
    const [a, b] = [lum(fg), lum(back)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 4.5) out.push(`${e.tagName}.${e.className} ${fg} on ${back}: ${ratio.toFixed(2)}`);
  }
  return out;
}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_text_colour_pair_has_4_5_to_1_contrast(page, theme):
    page.add_init_script(f"localStorage.setItem('hybridplan-theme', '{theme}')")
    page.goto(page.base + f"/?page={QWEN}&hw=h200&quant=fp8&cmd=--model-path%20nowhere/none")
    _settled(page)
    page.wait_for_selector("#explain-command-err:not([hidden])")  # the error colour too
    page.fill("#calc-C", "0")  # and a field error
    page.click("#deploy-more summary")
    assert page.get_attribute("html", "data-theme") == theme
    assert page.evaluate(CONTRAST) == []
