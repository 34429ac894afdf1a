"""The GPU-only pool budget against the qwen3.8-27b page's measured RTX 5090 pools (data/boot_logs.yaml records read
from the page's DSPARK pin comment): from the card and the checkpoint alone, `explain --gpu` gives their K exactly and
their KV pool within 1%."""

from __future__ import annotations

import pytest

from hybridplan.engine.sglang.serving.constants import constants_for
from hybridplan.calibration.public_compare import compare
from hybridplan.calibration.public_logs import load

CELLS = [r for r in load().records if r.id.startswith("qwen38-27b-cookbook-dspark-fp32-")]


def test_both_serving_tiers_are_measured():
    assert sorted((r.values.mamba_cache_size, r.values.kv_tokens) for r in CELLS) == [(5, 29_490), (6, 25_911)]


@pytest.mark.parametrize("r", CELLS, ids=lambda r: r.id)
def test_k_exact_and_kv_within_one_percent(r):
    row = compare(r)
    assert row.K.predicted == row.K.logged
    assert abs(row.kv_tokens.relative) < 0.01


def test_the_card_term_is_data_with_its_source():
    c = constants_for("rtx5090")
    assert c.context_gib_single == pytest.approx(0.572) and "25,911" in c.note("context_gib_single")
    assert constants_for("rtx4090").context_gib_single == constants_for().context_gib_single
