"""axe-core (vendored offline: tests/web/vendor/axe.min.js, axe-core 4.14.1 from npm, MPL-2.0) finds no serious or
critical accessibility violation on the page, at phone and desktop widths, in both themes."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

pytestmark = pytest.mark.browser

AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"


LOG_652 = Path(__file__).resolve().parents[1] / "fixtures" / "vllm" / "club3090-652-rtx5090.log"
VLLM_VIEW = ("/?eng=vllm&budget=40&egpu=h200&cmd=vllm+serve+Qwen%2FQwen3.8-27B+--max-model-len+32768"
             "&pe=vllm&pcmd=vllm+serve+Qwen%2FQwen3.5-27B&pg=h200&pL=262144&pC=8")
WIDTHS_THEMES = [(375, "light"), (1280, "dark")]


@contextmanager
def _opened(browser, url: str, width: int, theme: str) -> Iterator:
    """The page at `url` in its own context; the page's CSP forbids injected scripts, this context bypasses it to load
    axe."""
    context = browser.new_context(viewport={"width": width, "height": 900}, bypass_csp=True)
    try:
        pg = context.new_page()
        pg.add_init_script(f"localStorage.setItem('hybridplan-theme', '{theme}')")
        pg.goto(url)
        yield pg
    finally:
        context.close()


def _serious(pg) -> list:
    pg.wait_for_load_state("networkidle")
    pg.add_script_tag(path=str(AXE))
    result = pg.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in result["violations"]
            if v["impact"] in ("serious", "critical")]


@pytest.mark.parametrize("width,theme", WIDTHS_THEMES)
def test_axe_on_the_engine_selector_and_the_side_by_side_view(browser, live_server, width, theme):
    """Explain on vLLM (its pool, groups and pages, and a boot log checked), Plan on vLLM (its candidates table) and
    the Compare table, at phone and desktop widths."""
    with _opened(browser, live_server + VLLM_VIEW, width, theme) as pg:
        pg.wait_for_selector('#explain-out [data-key="kv_cache_tokens"]', timeout=20_000)
        pg.wait_for_selector("#plan-vllm-candidates tr.best", timeout=20_000)
        pg.wait_for_selector('#compare-table [data-key="kv_tokens"]', timeout=20_000)
        pg.click("#explain-vllm-pages summary")
        pg.click("#explain-log-box summary")
        pg.fill("#explain-log", LOG_652.read_text())
        pg.click("#explain-run")
        pg.wait_for_selector("#logcheck-rows", timeout=20_000)
        pg.click("#logcheck-launch summary")
        assert _serious(pg) == []
        assert pg.evaluate("document.documentElement.scrollWidth") <= width  # nothing widens the phone layout


@pytest.mark.parametrize("width,theme", WIDTHS_THEMES)
def test_axe_reports_no_serious_violations(browser, live_server, width, theme):
    with _opened(browser, live_server + "/?page=kimi-k3&hw=gb300", width, theme) as pg:
        pg.wait_for_selector("#memory-pools .stat", timeout=20_000)
        pg.wait_for_selector("#plan-out #plan-command, #plan-out #plan-why", timeout=20_000)
        serious = _serious(pg)
        assert serious == [], serious


FLEET_VIEW = "/?fm=Qwen%2FQwen3.5-9B&fg=h100-80gb&fL=32768&fC=64&fn=4"


@pytest.mark.parametrize("width,theme", WIDTHS_THEMES)
def test_axe_on_the_fleet_table_and_launch(browser, live_server, width, theme):
    """The Fleet panel's ranked table, its launch with verdicts and its manifest, at phone and desktop widths."""
    with _opened(browser, live_server + FLEET_VIEW, width, theme) as pg:
        pg.wait_for_selector("#fleet-manifest", timeout=60_000)
        assert _serious(pg) == []
        assert pg.evaluate("document.documentElement.scrollWidth") <= width
