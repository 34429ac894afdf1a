"""docs/vllm-calibration.md: every public vLLM boot log in benchmarks/vllm_boot_logs.yaml reproduces from its logged
available KV memory (or its row names the differing rule), and the committed table is what the script writes now."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _table():
    spec = importlib.util.spec_from_file_location("vllm_calibration_table",
                                                  ROOT / "benchmarks" / "vllm_calibration_table.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses resolve their module
    spec.loader.exec_module(mod)
    return mod


def test_every_log_reproduces_or_names_the_rule():
    mod = _table()
    rows = mod.rows()
    assert len(rows) >= 5
    for row in rows:
        assert row.reproduced or row.log.get("differs"), (row.log["source"], row.prediction.tokens)
    assert sum(r.reproduced for r in rows) >= 5


def test_the_committed_table_is_current():
    mod = _table()
    assert (ROOT / "docs" / "vllm-calibration.md").read_text() == mod.render(mod.rows())
