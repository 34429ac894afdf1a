"""A simulated mem-fraction sweep: it records each point as it finishes, survives an interruption, resumes without
measuring anything twice, and exports its records into a copy of the page."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter

from hybridplan.cookbook.pages import bundled_path, load_page
from hybridplan.verify.store import Store
from tests.verify.conftest import synth, wait_gone

SWEEP = ["--sweep", "mem-fraction-static=0.88:0.92:0.01"]  # 5 points


def _recorded(db) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _mfs(argv: list[str]) -> str:
    return argv[argv.index("--mem-fraction-static") + 1]


def test_interrupted_sweep_resumes_and_exports(box, cli, tmp_path):
    box.configure({"boot_delay_s": 0.4}, points=[
        {"when": {"--mem-fraction-static": "0.88"}, "behavior": "exit", "log": synth("cuda-graph-oom")},
        {"when": {"--mem-fraction-static": "0.92"}, "behavior": "oom_on_request",
         "request_log": synth("first-request-oom")},
    ])
    args = box.args(*SWEEP)
    proc = subprocess.Popen([sys.executable, "-m", "hybridplan", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while _recorded(box.db) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    child = int(box.child_pid.read_text())
    assert wait_gone(child), "the interrupted point's server outlived verify"
    before = _recorded(box.db)
    assert 2 <= before < 5
    code, out, _ = cli(*args, "--json")
    assert code == 1  # two of the five points fail, on purpose
    result = json.loads(out)
    assert len(result["already_recorded"]) == before
    assert len(result["points"]) == 5 - before
    with Store(box.db) as store:
        runs = store.runs()
    assert sorted(r.sweep for r in runs) == [f"mem-fraction-static=0.{v}" for v in range(88, 93)]
    outcome = {r.sweep.split("=")[1]: (r.outcome, (r.failure or {}).get("phase")) for r in runs}
    assert outcome == {"0.88": ("boot-failure", "cuda_graph"), "0.89": ("serves", None), "0.90": ("serves", None),
                       "0.91": ("serves", None), "0.92": ("runtime-oom", "first_request")}
    # nothing recorded before the interruption was measured again; only the interrupted point may have run twice
    launched = Counter(_mfs(a) for a in box.launches())
    values = [f"0.{v}" for v in range(88, 93)]
    assert all(launched[v] == 1 for v in values[:before] + values[before + 1:])
    assert 1 <= launched[values[before]] <= 2

    page_copy = tmp_path / "qwen3.8-27b.yaml"
    page_copy.write_text(bundled_path("qwen3.8-27b").read_text())
    code, out, _ = cli("results", "export", "qwen3.8-27b", "--page-file", str(page_copy), "--db", str(box.db),
                       "--json")
    assert code == 0 and json.loads(out)["records"] == 5 and json.loads(out)["written"] is False
    assert page_copy.read_text() == bundled_path("qwen3.8-27b").read_text()  # a patch only
    code, _, _ = cli("results", "export", "qwen3.8-27b", "--page-file", str(page_copy), "--db", str(box.db), "--write")
    assert code == 0
    page = load_page(str(page_copy))
    def recorded(c):
        return [m for m in c.verification.measurements if m.source and m.source.startswith("hybridplan results")]

    cells = [c for c in page.cells if recorded(c)]  # the one cell the swept selection lands on
    assert len(cells) == 1 and cells[0].match["hw"] == "rtx5090"
    mine = recorded(cells[0])
    assert len(mine) == 5
    by_note = {m.note.split(";")[0]: m for m in mine}
    served = by_note["swept mem-fraction-static=0.89"]
    assert (served.outcome, served.max_mamba_cache_size, served.max_total_num_tokens, served.tpot_ms,
            served.accept_length) == ("serves", 35, 197163, 31.02, 3.21)
    assert by_note["swept mem-fraction-static=0.88"].outcome == "boot-failure"
    assert by_note["swept mem-fraction-static=0.92"].outcome == "runtime-oom"
    assert served.build == "1cf2b8c54" and served.workload.isl == 8192
