"""Calibration: the per-GPU context and headroom the planner estimates, fitted to stored runs."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from hybridplan.hardware.catalog import lookup
from hybridplan.engine.sglang.serving.constants import constants_for
from hybridplan.calibration.calibrate import STRICT_GIB, calibrate
from hybridplan.engine.sglang.logparse import parse_log
from hybridplan.verify.store import Store
from tests.conftest import FIXTURES
from tests.verify.conftest import make_run

SYNTH_OK = FIXTURES / "logs" / "synthetic" / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-ok.log"
RTX4090 = FIXTURES / "logs" / "qwen3.5-9b-tp2-rtx4090.log"
CELL = ("--model-path RadixArk/Qwen3.8-27B-NVFP4", "--kv-cache-dtype fp8_e4m3", "--max-running-requests 1",
        "--cuda-graph-max-bs-decode 1")


def _sweep_runs():
    boot = parse_log(SYNTH_OK.read_text()).as_dict()  # P = 30.84 GiB, graphs 0.44 GiB
    failed = {k: v for k, v in boot.items() if k not in ("cuda_graph_gib", "max_running_requests")}
    return [
        make_run(flags=CELL + ("--mem-fraction-static 0.86",), sweep="mem-fraction-static=0.86", boot=boot),
        make_run(flags=CELL + ("--mem-fraction-static 0.9",), sweep="mem-fraction-static=0.9", boot=boot),
        make_run(flags=CELL + ("--mem-fraction-static 0.94",), sweep="mem-fraction-static=0.94", boot=failed,
                 outcome="boot-failure", failure={"phase": "cuda_graph", "message": "num_active_captures_"}, bench={}),
    ]


def test_context_and_headroom_from_a_mem_fraction_sweep():
    runs = [replace(r, id=i + 1) for i, r in enumerate(_sweep_runs())]
    g = calibrate(runs)["gpus"]["rtx5090"]
    visible = lookup("rtx5090").torch_total_mib / 1024  # 31.36 GiB: what torch sees, not memory.total
    assert g["context_gib"]["fitted"]["one_rank"] == pytest.approx(visible - 30.84, abs=1e-4)
    planner = constants_for("rtx5090").context_gib_single  # the card's measured term (data/planner_constants.yaml)
    assert g["context_gib"]["planner"]["one_rank"] == pytest.approx(planner)
    err = g["error"]
    assert err["pre_load_gib_mae"][0] == pytest.approx(abs(visible - planner - 30.84), abs=1e-4)
    assert err["pre_load_gib_mae"][1] == pytest.approx(0.0, abs=1e-4)
    # the true headroom lies in (30.84 x 0.06, 30.84 x 0.10]: the offset puts the planner just above the failure
    head = g["headroom"]
    planner_head = {r["run"]: r for r in g["rows"]}
    assert head["consistent"] and head["bounds_broken"] == 0
    lo, hi = head["interval_gib"]
    assert hi - lo == pytest.approx(30.84 * 0.10 - 30.84 * 0.06 - STRICT_GIB, abs=1e-3)
    assert head["offset_gib"] == pytest.approx(lo, abs=1e-4)
    assert [r["planner_says_fits"][1] for r in planner_head.values()] == [True, True, False]
    assert err["fits_wrong"][1] == 0 and err["fits_judged"] == 3
    assert len(err["K_mean_rel"]) == 2 and None not in err["kv_tokens_mean_rel"]


def test_several_ranks_from_the_real_rtx4090_log(tmp_path, cli_json):
    boot = parse_log(RTX4090.read_text()).as_dict()
    run = make_run(gpu="rtx4090", boot=boot, flags=("--model-path Qwen/Qwen3.5-9B", "--tp-size 2",
                                                    "--mem-fraction-static 0.8", "--context-length 262144"),
                   selection={"hw": "rtx4090"})
    no_profile = make_run(gpu="rtx4090", boot={"failure": {"phase": "kv_pool", "message": "m"}}, sweep="x")
    unknown_gpu = make_run(gpu="tpu-v9", boot=boot, sweep="y")
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        for r in (run, no_profile, unknown_gpu):
            store.record(r)
    code, out = cli_json("results", "calibrate", "--db", str(db), "--json")
    assert code == 0
    g = out["gpus"]["rtx4090"]
    assert g["context_gib"]["fitted"] == {"one_rank": None,
                                          "several_ranks": pytest.approx(lookup("rtx4090").torch_total_mib / 1024
                                                                         - 22.93, abs=1e-4)}
    assert g["context_gib"]["planner"]["several_ranks"] == pytest.approx(0.40 + 0.19)
    lo, hi = g["headroom"]["interval_gib"]  # served at slack 22.93 x 0.2, graphs took 0.26 GiB
    assert hi - lo == pytest.approx(22.93 * 0.2 - 0.26, abs=1e-3)
    reasons = sorted(s["reason"] for s in out["skipped"])
    assert reasons[0].startswith("no 'Load weight begin' line") and "unknown GPU 'tpu-v9'" in reasons[1]
    assert json.dumps(out)  # the payload is plain JSON


def test_calibrate_needs_runs(tmp_path, cli):
    db = tmp_path / "r.sqlite"
    Store(db).close()
    code, _, err = cli("results", "calibrate", "--db", str(db))
    assert code == 2 and "no recorded runs" in err
