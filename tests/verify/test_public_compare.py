"""Predicted vs logged on the public boot logs (data/boot_logs.yaml) and the cookbook records, and docs/calibration.md
generated from exactly these numbers."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from hybridplan.cookbook.pages import load_page
from hybridplan.cookbook.record_checks import check, margin_interval
from hybridplan.engine.sglang.serving.constants import constants_for
from hybridplan.calibration.public_compare import compare_all
from tests.conftest import benchmark_module

ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=1)
def rows():
    return compare_all()


def test_the_logs_span_several_cards_with_links():
    rs = rows()
    assert len(rs) >= 19 and len({r.record.gpu for r in rs}) >= 8
    assert sum(r.record.url.startswith("https://") for r in rs) >= 17


def test_visible_memory_and_free_before_load_hold_on_the_logs():
    vis = [r.visible_gib.error for r in rows() if r.visible_gib.error is not None]
    pre = [r.pre_load_gib.error for r in rows() if r.pre_load_gib.error is not None]
    assert len(vis) >= 4 and max(map(abs, vis)) <= 0.15  # torch totals differ by driver: 23.52 to 23.65 on a 4090
    assert len(pre) >= 8 and max(map(abs, pre)) <= 1.1  # the 8-rank logs spread 1.43-2.59 GiB of NCCL state


def test_the_engine_rule_reproduces_the_logged_pools_from_the_logs_own_p_and_a():
    exact = [r for r in rows() if r.engine_kv_tokens.error is not None]
    assert exact, "no log with a catalog model and its P and A"
    for r in exact:
        # A in the engine is a little below the last "Load weight end" avail (~14 MiB on the RTX 4090 log)
        assert abs(r.engine_kv_tokens.relative) < 0.01 and abs(r.engine_K.relative) < 0.015, r.record.id
    r = next(r for r in exact if r.record.id == "qwen35-9b-tp2-rtx4090-local")
    assert (r.weights_gib.predicted, r.weights_gib.logged) == (pytest.approx(8.81, abs=0.01), 8.85)
    assert (r.K.predicted, r.kv_tokens.predicted) == (185, 326_303)


def test_the_margin_sits_inside_what_the_records_allow():
    page = load_page("qwen3.8-27b")
    checks = [c for rec in page.records for c in check(rec, "rtx5090", page.engine_version)]
    margin = constants_for().margin_gib
    lo, hi = margin_interval(checks, margin)
    assert lo < margin < hi and (round(lo, 2), round(hi, 2)) == (0.27, 0.43)


def test_docs_calibration_is_generated_from_this_data():
    assert (ROOT / "docs" / "calibration.md").read_text() == benchmark_module("calibration_table").render()
