"""`verify` end to end against the fake GPU box: boot, health, benchmark, stop, classify and record."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
import yaml

from hybridplan.engine.sglang.failures import PHASES
from hybridplan.verify.store import OUTCOMES, Store
from tests.verify.conftest import BENCH, alive, synth, wait_gone


def test_a_serving_point_records_boot_bench_and_check(box, cli):
    box.configure()
    code, out, _ = cli(*box.args("--json"))
    assert code == 0
    result = json.loads(out)
    assert result["engine"] == {"version": "0.5.23+g1cf2b8c54", "commit": "1cf2b8c54"}  # asked through the launcher
    assert [p["outcome"] for p in result["points"]] == ["serves"]
    with Store(box.db) as store:
        (run,) = store.runs()
    assert run.key.gpu == "rtx5090" and run.key.page == "qwen3.8-27b"
    assert run.key.selection["spec"] == "none" and run.key.workload["num_prompts"] == 4
    assert not any(f.startswith(("--host", "--port")) for f in run.key.flags)  # the harness's endpoint is no key
    assert (run.boot["max_mamba_cache_size"], run.boot["kv_tokens"]) == (35, 197163)
    assert (run.bench["median_tpot_ms"], run.bench["accept_length"]) == (31.02, 3.21)
    assert f"--port {box.port}" in run.command and "-m sglang.launch_server" in run.command
    assert "--max-concurrency 1" in run.bench_command and "--num-prompts 4" in run.bench_command
    assert "The server is fired up" in run.log and "Serving Benchmark Result" in run.bench_output
    assert run.check["rows"] and run.check["engine"]["version"] == "0.5.23"
    assert (box.root / "runs" / "0000-server.log").read_text() == run.log


@pytest.mark.parametrize("scenario, outcome, phase", [
    ({"behavior": "exit", "log": synth("cuda-graph-oom")}, "boot-failure", "cuda_graph"),
    ({"behavior": "exit", "log": synth("weights-oom")}, "boot-failure", "weights"),
    ({"behavior": "killed", "log": synth("killed")}, "boot-failure", "killed"),
    ({"behavior": "exit", "exit_code": 3, "log": None}, "boot-failure", "startup"),
    ({"behavior": "oom_on_request", "request_log": synth("first-request-oom")}, "runtime-oom", "first_request"),
    ({"behavior": "hang", "log": synth("weights-oom")}, "boot-failure", "weights"),
    ({"behavior": "hang", "log": None}, "boot-failure", "timeout"),
    ({"behavior": "hang_ignoring_sigterm", "log": None}, "boot-failure", "timeout"),
])
def test_failure_phases(box, cli, scenario, outcome, phase):
    box.configure(scenario)
    code, out, _ = cli(*box.args("--json", boot_timeout=3))
    assert code == 1
    (point,) = json.loads(out)["points"]
    assert (point["outcome"], point["failure"]["phase"]) == (outcome, phase)
    assert outcome in OUTCOMES and phase in PHASES
    assert wait_gone(int(box.child_pid.read_text()))  # the server's whole group was stopped


def test_a_benchmark_that_fails_while_the_server_lives_is_the_bench_phase(box, cli, tmp_path):
    broken = tmp_path / "bench.txt"
    broken.write_text("Traceback (most recent call last):\nValueError: tokenizer not found\n")
    box.configure({"bench": str(broken)})
    code, out, _ = cli(*box.args("--json"))
    (point,) = json.loads(out)["points"]
    assert code == 1 and point["outcome"] == "degraded" and point["failure"]["phase"] == "bench"


def test_fewer_completed_requests_than_sent_is_degraded(box, cli, tmp_path):
    partial = tmp_path / "bench.txt"
    partial.write_text(BENCH.read_text().replace("Successful requests:                     4",
                                                 "Successful requests:                     3"))
    box.configure({"bench": str(partial)})
    _, out, _ = cli(*box.args("--json"))
    (point,) = json.loads(out)["points"]
    assert point["outcome"] == "degraded" and point["failure"]["message"] == "3 of 4 requests completed"


def test_stopping_kills_only_the_group_it_started(box, cli):
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        box.configure({"behavior": "hang_ignoring_sigterm", "log": None})
        cli(*box.args(boot_timeout=1))
        assert wait_gone(int(box.child_pid.read_text()))
        assert alive(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()


def test_env_of_the_command_travels_inside_the_launcher(box, cli, tmp_path):
    page = tmp_path / "page.yaml"
    from hybridplan.cookbook.pages import bundled_path

    data = yaml.safe_load(bundled_path("qwen3.8-27b").read_text())
    base = next(c for c in data["cells"] if c["match"].get("hw") == "rtx5090" and "nvfp4-fp4-head" in
                (c["match"]["quant"] if isinstance(c["match"]["quant"], list) else [c["match"]["quant"]])
                and c["match"].get("variant") == "default" and c["match"].get("nodes") == "single")
    base["env"] = [*base.get("env", []), "SGLANG_VLM_CACHE_SIZE_MB=50"]
    page.write_text(yaml.safe_dump(data, sort_keys=False))
    box.configure()
    args = box.args("--json")
    args[1] = str(page)
    code, _, _ = cli(*args)
    assert code == 0
    rows = [json.loads(line) for line in box.argv_log.read_text().splitlines()]
    server = next(r for r in rows if r["argv"][:2] == ["-m", "sglang.launch_server"])
    assert server["env"] == {"SGLANG_VLM_CACHE_SIZE_MB": "50"}


def test_dry_run_lists_points_and_skips_greyed_selections(box, cli):
    box.configure()
    code, out, _ = cli(*box.args("--json", "--dry-run", "--all-overlays", "--sweep", "mem-fraction-static=0.88,0.9",
                                 picks=["--hw", "rtx5090", "--quant", "nvfp4-fp4-head"]))
    assert code == 0
    result = json.loads(out)
    # 4 specs x 2 tiers x 2 SSM dtypes, less the combination the page greys out, times 2 swept values
    assert len(result["skipped"]) == 1
    skipped = result["skipped"][0]
    assert skipped["selection"] == {"hw": "rtx5090", "quant": "nvfp4-fp4-head", "spec": "dflash",
                                    "tier": "low-latency", "ssm-dtype": "float32"}
    assert "ssm-dtype=float32" in skipped["reason"]
    assert len(result["points"]) == 15 * 2
    assert {p["sweep"]["--mem-fraction-static"] for p in result["points"]} == {"0.88", "0.9"}
    assert all(f"--mem-fraction-static {p['sweep']['--mem-fraction-static']}" in p["flags"]
               for p in result["points"])
    assert not box.launches()  # nothing ran


def test_bad_inputs_exit_2(box, cli):
    box.configure()
    code, _, err = cli(*box.args("--sweep", "no-such-flag=1:2:1"))
    assert code == 2 and "--no-such-flag is not a flag" in err
    code, _, err = cli(*box.args(picks=["--hw", "rtx5090", "--colour", "red"]))
    assert code == 2 and "colour" in err


def test_the_engine_version_must_be_readable(box, cli):
    box.configure(version="no version here")
    code, _, err = cli(*box.args())
    assert code == 2 and "could not read the engine version" in err
    code, _, _ = cli(*box.args("--engine-version", "0.5.23", "--engine-commit", "abc1234"))
    assert code == 0
    with Store(box.db) as store:
        assert store.runs()[0].key.engine_commit == "abc1234"


def test_sigterm_stops_the_running_server_and_exits_130(box):
    box.configure({"behavior": "hang", "log": None})
    proc = subprocess.Popen([sys.executable, "-m", "hybridplan", *box.args(boot_timeout=60)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not box.child_pid.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and b"run the same command again to resume" in err
    assert wait_gone(int(box.child_pid.read_text()))
