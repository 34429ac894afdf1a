"""The Fleet panel in headless Chromium shows the table `fleet --json` prints, the chosen launch node by node with the
engine's verdicts, and its manifests; its inputs travel in the link."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

ARGS = ("fleet", "--model", "Qwen/Qwen3.5-9B", "--gpu", "h100-80gb", "-L", "32768", "-C", "64", "--gpus-available",
        "4", "--json")


def test_the_fleet_panel_shows_the_cli_table_and_launch(page, cli_json):
    page.goto(page.base + "/")
    page.wait_for_selector("html[data-ready='true']")
    page.fill("#fleet-model", "Qwen/Qwen3.5-9B")
    page.select_option("#fleet-gpu", "h100-80gb")
    page.fill("#fleet-L", "32768")
    page.fill("#fleet-C", "64")
    page.fill("#fleet-n", "4")
    page.click("#fleet-run")
    page.wait_for_selector("#fleet-table tbody tr", timeout=60_000)
    code, d = cli_json(*ARGS)
    assert code == 0
    shown = page.locator("#fleet-table tbody tr")
    assert shown.count() == min(12, len(d["rows"]))
    for i, row in enumerate(d["rows"][:shown.count()]):
        cells = shown.nth(i).locator("td").all_inner_texts()
        assert cells[:3] == [row["engine"], row["layout"], str(row["gpus"])], i
    assert page.get_attribute("#fleet-table tbody tr.chosen", "data-rank") == str(d["chosen"])
    argv = " ".join(d["launch"]["roles"][0]["ranks"][0]["argv"])
    assert argv in page.inner_text("#fleet-launch")
    assert page.locator("#fleet-launch [data-serves='true']").count() == sum(
        1 for role in d["launch"]["roles"] for rank in role["ranks"] if rank["serves"])
    assert page.inner_text("#fleet-manifest").startswith("apiVersion: apps/v1")
    page.click("#fleet-manifests [data-manifest='compose']")
    assert page.inner_text("#fleet-manifest").startswith("services:")
    assert "fm=Qwen%2FQwen3.5-9B" in page.url and "fn=4" in page.url
    # the link reproduces the answer
    page.goto(page.url)
    page.wait_for_selector("#fleet-table tbody tr", timeout=60_000)
    assert page.get_attribute("#fleet-table tbody tr.chosen", "data-rank") == str(d["chosen"])


def test_a_bad_field_is_one_line_on_it(page):
    page.goto(page.base + "/")
    page.wait_for_selector("html[data-ready='true']")
    page.fill("#fleet-model", "")
    page.click("#fleet-run")
    assert page.inner_text("#fleet-model-err").startswith("model: ")
