"""`results export`: runs become measurement records in the right cell, the page text keeps its comments and
layout, and the result still loads as a page."""

from __future__ import annotations

import yaml

from hybridplan.cookbook.pages import bundled_path, load_page
from hybridplan.verify.export import export_runs, insert_measurements, measurement, unified_patch
from tests.verify.conftest import make_run

PAGE_ID = "qwen3.8-27b"


def test_measurement_record_from_a_run():
    page = load_page(PAGE_ID)
    run = make_run(sweep="mem-fraction-static=0.89")
    index, record = measurement(run, page)
    cell = page.cells[index]
    assert (cell.match["hw"], cell.match["quant"]) == ("rtx5090", "nvfp4-fp4-head")
    # the overlay picks the run made; the cell's own match dims are one value each, so they need no narrowing
    assert record["covers"] == {"equals": {"spec": "none", "tier": "low-latency", "ssm-dtype": "float32"}}
    assert (record["outcome"], record["max_mamba_cache_size"], record["max_total_num_tokens"], record["tpot_ms"],
            record["accept_length"], record["build"]) == ("serves", 35, 197163, 31.02, 3.21, "1cf2b8c54")
    assert record["workload"] == {"isl": 8192, "osl": 1024, "concurrency": 1}
    assert "--host" not in record["protocol"] and "--num-prompts 4" in record["protocol"]
    assert record["note"] == "swept mem-fraction-static=0.89"


def test_export_into_a_copy_keeps_comments_and_loads(tmp_path):
    copy = tmp_path / "page.yaml"
    original = bundled_path(PAGE_ID).read_text()
    copy.write_text(original)
    page = load_page(str(copy))
    failed = make_run(outcome="boot-failure", failure={"phase": "cuda_graph", "message": "num_active_captures_"},
                      bench={}, flags=("--mem-fraction-static 0.945",))
    old, new, count = export_runs(copy, [make_run(), failed], page)
    assert count == 2 and old == original
    comments = [line for line in original.splitlines() if line.lstrip().startswith("#")]
    assert comments and all(c in new.splitlines() for c in comments)
    added = [line for line in new.splitlines() if line not in original.splitlines()]
    assert all(line.startswith("        ") for line in added)  # inside the cell's measurements list
    copy.write_text(new)
    index, _ = measurement(make_run(), page)  # the cell the runs' selection lands on
    cell = load_page(str(copy)).cells[index]
    assert [m.outcome for m in cell.verification.measurements][-2:] == ["serves", "boot-failure"]
    patch = unified_patch(old, new, copy)
    assert patch.startswith("--- a/") and patch.count("\n+        - date:") == 2


CELLS = """\
# a page fragment
cells:
  - match: {hw: a}
    flags: [--x 1]
  # the second cell
  - match: {hw: b}
    verification:
      status: verified
  - match: {hw: c}
    verification:
      measurements: []
other: 1
"""


def test_cells_without_a_list_get_one():
    rec = {"protocol": "p", "outcome": "serves"}
    new = insert_measurements(CELLS, {0: [rec], 1: [rec], 2: [rec]})
    data = yaml.safe_load(new)
    assert [c["verification"]["measurements"] for c in data["cells"]] == [[rec], [rec], [rec]]
    assert data["cells"][1]["verification"]["status"] == "verified" and data["other"] == 1
    assert "# the second cell" in new and new.startswith("# a page fragment")


def test_a_cell_matching_several_values_is_narrowed_to_the_runs_own(tmp_path):
    data = yaml.safe_load(bundled_path(PAGE_ID).read_text())
    index, _ = measurement(make_run(), load_page(PAGE_ID))
    data["cells"][index]["match"]["quant"] = ["nvfp4-bf16-head", "nvfp4-fp4-head"]  # one cell for both quants
    copy = tmp_path / "page.yaml"
    copy.write_text(yaml.safe_dump(data, sort_keys=False))
    _, record = measurement(make_run(), load_page(str(copy)))
    assert record["covers"] == {"equals": {"spec": "none", "tier": "low-latency", "ssm-dtype": "float32",
                                           "quant": "nvfp4-fp4-head"}}
