"""Keyboard and screen-reader basics on the whole page: every control has a name, Tab reaches the selectors."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

UNNAMED = """() => Array.from(document.querySelectorAll('input, select, textarea, button')).filter(e => {
  const name = (e.labels && e.labels.length) || e.getAttribute('aria-label') || (e.textContent || '').trim();
  return !name;
}).map(e => e.outerHTML.slice(0, 80))"""


def test_every_control_has_a_name(page):
    page.goto(page.base + "/?page=qwen3.8-27b")
    page.wait_for_selector("#memory-deploy rect")
    assert page.evaluate(UNNAMED) == []
    assert page.locator("html").get_attribute("lang") == "en"
    assert page.locator("svg[role='list'] rect[role='listitem'][aria-label]").count() >= 5


def test_tab_walks_from_the_page_picker_into_the_chips(page):
    """Each chip row is a radio group: one tab stop (its chosen chip), Space or Enter on a focused chip picks it."""
    page.goto(page.base + "/?page=qwen3.8-27b")
    page.wait_for_selector("#deploy-rows .chip")
    page.wait_for_selector("#calc-out .stat")
    page.focus("#deploy-page")
    seen = []
    for _ in range(4):
        page.keyboard.press("Tab")
        seen.append(page.evaluate("[document.activeElement.getAttribute('data-run') || "
                                  "document.activeElement.getAttribute('data-dim'), "
                                  "document.activeElement.getAttribute('aria-checked')]"))
    assert [s[0] for s in seen] == ["pip", "hw", "variant", "quant"]
    assert all(s[1] == "true" for s in seen)  # the tab stop of each group is its chosen chip
    page.focus('#deploy-rows .chip[data-dim="hw"][data-option="gb300"]')
    page.keyboard.press("Space")
    page.wait_for_selector('#deploy-rows .chip[data-dim="hw"][data-option="gb300"][aria-checked="true"]')
    assert "hw=gb300" in page.url
