"""`logs check`: the engine model fed with a log's own numbers explains every fixture log, rule by rule."""

from __future__ import annotations

import json

import pytest

from hybridplan.engine.sglang.command import parse_command
from hybridplan.engine.sglang.serving.logcheck import check_log
from hybridplan.engine.sglang.logparse import parse_log
from tests.conftest import FIXTURES

LOGS = FIXTURES / "logs"
SYNTH = LOGS / "synthetic"
RTX4090 = LOGS / "qwen3.5-9b-tp2-rtx4090.log"
RTX4090_CMD = ("python -m sglang.launch_server --model-path Qwen/Qwen3.5-9B --tp-size 2 --mem-fraction-static 0.8 "
               "--context-length 262144")
# the GB10 log's flags (its sidecar has no verbatim command); 0.5.12's `--cuda-graph-max-bs` is ambiguous in 0.5.23's
# parser (it prefixes both --cuda-graph-max-bs-decode and -prefill), so the decode spelling stands in for it
GB10_CMD = ("--model-path nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-NVFP4 --tp 4 --ep 4 --mem-fraction-static 0.85 "
            "--context-length 262144 --kv-cache-dtype fp8_e4m3 --max-mamba-cache-size 48 --max-running-requests 32 "
            "--cuda-graph-max-bs-decode 8")


def _check(path, command: str, log_version: str | None = None) -> dict:
    return check_log(parse_log(path.read_text()), parse_command(command), log_version=log_version)


def _rows(result: dict) -> dict:
    return {r["quantity"]: r for r in result["rows"]}


def _sidecar_command(path) -> str:
    return json.loads(path.with_name(path.name + ".json").read_text())["launch"]["command_verbatim"].split("2>&1")[0]


def test_rtx4090_dev_build_every_difference_has_its_rule():
    result = _check(RTX4090, _sidecar_command(RTX4090), "0.0.0.dev11582+g4df60434d")
    assert result["proxies"]["available_gib"]["value"] == 14.08
    assert result["proxies"]["pre_load_gib"]["value"] == 22.93
    assert result["proxies"]["pool_budget_gib"]["value"] == pytest.approx(14.08 - 22.93 * 0.2 - 100 / 1024, abs=1e-4)
    rows = _rows(result)
    assert (rows["max_mamba_cache_size"]["predicted"], rows["max_mamba_cache_size"]["observed"]) == (184, 186)
    assert rows["max_mamba_cache_size"]["rule"] == "multimodal_reservation"
    assert "0.10 GiB" in rows["max_mamba_cache_size"]["explanation"]
    assert rows["conv_state_gib"]["rule"] == "match"
    assert rows["ssm_state_gib"]["rule"] == "follows" and "K = 186" in rows["ssm_state_gib"]["explanation"]
    assert (rows["kv_tokens"]["predicted"], rows["kv_tokens"]["rule"]) == (324978, "unlogged_allocations")
    assert "0.014 GiB" in rows["kv_tokens"]["explanation"]
    assert rows["k_gib"]["rule"] == rows["v_gib"]["rule"] == "follows"
    mrr = rows["max_running_requests"]
    assert (mrr["predicted"], mrr["observed"], mrr["rule"]) == (36, 62, "slots_per_request")
    assert "S = 3" in mrr["explanation"] and "S = 5" in mrr["explanation"]
    assert "0.0.0.dev11582" in mrr["explanation"]
    assert result["explained"] is True


def test_synthetic_0523_boot_matches_exactly():
    path = SYNTH / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-ok.log"
    result = _check(path, _sidecar_command(path))
    assert all(r["rule"] == "match" for r in result["rows"]) and len(result["rows"]) == 8
    assert result["explained"] and "failure" not in result


def test_four_ranks_use_the_min_over_ranks():
    path = SYNTH / "sglang-0.5.23-qwen3.5-9b-tp2-pp2-wrapped.log"
    result = _check(path, _sidecar_command(path))
    assert result["proxies"]["available_gib"]["value"] == 18.21  # PP1's, not rank 0's 18.48
    assert all(r["rule"] == "match" for r in result["rows"])


def test_failure_after_the_pools_is_outside_the_pool_model():
    path = SYNTH / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-cuda-graph-oom.log"
    result = _check(path, _sidecar_command(path))
    assert result["failure"]["phase"] == "cuda_graph"
    assert all(r["rule"] == "match" for r in result["rows"])
    assert any("P x (1 - 0.9) = 3.08 GiB" in n for n in result["notes"])


@pytest.mark.parametrize("case, note", [
    ("weights-oom", "while loading the weights, before any pool was sized: the weights do not fit in the free memory "
                    "P = 30.84 GiB"),
    ("killed", "the process was killed"),
])
def test_failures_before_the_pools_are_named_as_such(case, note):
    ok = SYNTH / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-ok.log"
    result = _check(SYNTH / f"sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-{case}.log", _sidecar_command(ok))
    # the failure is named and says why the pool lines are absent, but nothing was compared: never "explained"
    assert result["rows"] == [] and "refusal" not in result and result["compared"] == 0
    assert result["explained"] is False and result["missing"] == [] and result["failure"]["phase"] == case.split("-")[0]
    assert any(note in n for n in result["notes"])


def test_mi355x_state_cache_refusal_is_reproduced():
    result = _check(LOGS / "qwen3.8-27b-fp8-mi355x-state-cache-failure.log",
                    "--model-path Qwen/Qwen3.8-27B-FP8 --mem-fraction-static 0.25", "0.5.17")
    ref = result["refusal"]
    assert ref["kind"] == "state_cache"
    rows = {r["quantity"]: r for r in ref["rows"]}
    assert rows["mamba_cache_per_req_mb"]["rule"] == "match"
    assert rows["mamba_cache_per_req_mb"]["predicted"] == pytest.approx(146.8125)
    assert (rows["max_mamba_cache_size"]["predicted"], rows["max_mamba_cache_size"]["rule"]) == (-28, "match")
    assert "-7.96 GiB" in ref["explanation"] and "below the --mem-fraction-static slack" in ref["explanation"]
    assert result["explained"]


def test_gb10_not_enough_memory_is_placed_below_the_boot_threshold():
    result = _check(LOGS / "nemotron3-ultra-gb10-not-enough-memory.log", GB10_CMD, "0.5.12")
    ref = result["refusal"]
    assert ref["kind"] == "no_tokens"
    assert [p["kind"] for p in ref["predicted"]] == ["too_small", "no_tokens", "no_kv_memory"]
    assert ref["boot_threshold_gib"] == pytest.approx(4.6543, abs=1e-4)
    assert "--max-mamba-cache-size 48 takes 4.65 GiB" in ref["explanation"]
    assert "T <= 0" in ref["explanation"] and "0.5.12" in ref["explanation"]
    assert result["explained"]


def test_a_difference_no_rule_explains_is_reported():
    doctored = RTX4090.read_text().replace("max_mamba_cache_size: 186", "max_mamba_cache_size: 150")
    result = check_log(parse_log(doctored), parse_command(RTX4090_CMD))
    assert _rows(result)["max_mamba_cache_size"]["rule"] == "unexplained"
    assert result["explained"] is False


def test_kv_dtype_mismatch_names_the_resolution_rule():
    result = _check(RTX4090, RTX4090_CMD + " --kv-cache-dtype fp8_e4m3")
    row = _rows(result)["kv_dtype"]
    assert (row["predicted"], row["observed"], row["rule"]) == ("torch.float8_e4m3fn", "torch.bfloat16", "kv_dtype")
    assert "configure_kv_cache_dtype" in row["explanation"]


def test_mem_fraction_comes_from_the_logs_server_args_when_the_command_has_none():
    path = SYNTH / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-ok.log"
    command = _sidecar_command(path).replace("--mem-fraction-static 0.9 ", "")
    result = _check(path, command)
    assert result["notes"] == ["the log does not say its sglang version; modelled as 0.5.23; pass --log-version",
                               "--mem-fraction-static 0.9 from the log's server_args line"]
    assert all(r["rule"] == "match" for r in result["rows"])


def test_cli_check_exit_codes(cli, cli_json, tmp_path):
    code, out = cli_json("logs", "check", str(RTX4090), "--json", "--log-version", "dev", "--", *RTX4090_CMD.split())
    assert code == 0 and out["explained"] is True
    doctored = tmp_path / "doctored.log"
    doctored.write_text(RTX4090.read_text().replace("max_mamba_cache_size: 186", "max_mamba_cache_size: 150"))
    code, _, _ = cli("logs", "check", str(doctored), "--", *RTX4090_CMD.split())
    assert code == 1
    code, _, err = cli("logs", "check", str(RTX4090), "--", "--model-path", "Qwen/Qwen3.5-9B")
    assert code == 2 and "--mem-fraction-static" in err
    code, _, err = cli("logs", "parse", str(tmp_path / "missing.log"))
    assert code == 2 and err.strip().endswith("missing.log: no such file")


def test_cli_parse_json_is_the_parser_dict(cli_json):
    code, out = cli_json("logs", "parse", str(RTX4090), "--json")
    assert code == 0 and out == parse_log(RTX4090.read_text()).as_dict() | {"missing": []}
    assert list(out["ranks"]) == ["TP0", "TP1"]
