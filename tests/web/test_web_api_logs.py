"""/api/logs/parse and /api/logs/check are `logs parse --json` and `logs check --json` on the same log text."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
RTX4090 = "qwen3.5-9b-tp2-rtx4090.log"
RTX4090_CMD = ("python -m sglang.launch_server --model-path Qwen/Qwen3.5-9B --tp-size 2 --mem-fraction-static 0.8 "
               "--context-length 262144")
MI355X = "qwen3.8-27b-fp8-mi355x-state-cache-failure.log"


@pytest.mark.parametrize("name", sorted(p.name for p in LOGS.glob("*.log")))
def test_parse_is_the_cli_object(client, cli_json, name):
    code, expected = cli_json("logs", "parse", "--json", str(LOGS / name))
    res = client.post("/api/logs/parse", json={"log": (LOGS / name).read_text()})
    assert code == 0 and res.status_code == 200 and res.json() == expected


def test_parse_reads_the_real_rtx4090_log(client):
    got = client.post("/api/logs/parse", json={"log": (LOGS / RTX4090).read_text()}).json()
    assert (got["max_mamba_cache_size"], got["kv_tokens"], got["max_running_requests"]) == (186, 327_310, 62)


def test_check_is_the_cli_object(client, cli_json):
    code, expected = cli_json("logs", "check", "--json", str(LOGS / RTX4090), "--", *shlex.split(RTX4090_CMD))
    res = client.post("/api/logs/check", json={"log": (LOGS / RTX4090).read_text(), "command": RTX4090_CMD})
    assert res.status_code == 200 and res.json() == expected
    assert code == (0 if expected["explained"] else 1)
    k = next(r for r in res.json()["rows"] if r["quantity"] == "max_mamba_cache_size")
    assert k["observed"] == 186


def test_check_without_mem_fraction_is_bad_input_like_the_cli(client, cli_json):
    cmd = "python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B-FP8"
    code, expected = cli_json("logs", "check", "--json", str(LOGS / MI355X), "--", *shlex.split(cmd))
    res = client.post("/api/logs/check", json={"log": (LOGS / MI355X).read_text(), "command": cmd})
    assert res.json() == expected
    assert res.status_code == {0: 200, 1: 200, 2: 400, 3: 422}[code]


@pytest.mark.parametrize("body,needle", [
    ({"log": ""}, "log: String should have at least 1 character"),
    ({"log": "x" * 2_000_001}, "log: String should have at most 2000000 characters"),
    ({"log": "x", "command": "--model-path Qwen/Qwen3.5-9B", "log_version": "v" * 121}, "log_version"),
])
def test_log_input_is_bounded(client, body, needle):
    path = "/api/logs/check" if "command" in body else "/api/logs/parse"
    res = client.post(path, json=body)
    assert res.status_code == 400 and needle in res.json()["error"]["message"]


def test_garbage_log_is_refused_naming_the_lines_it_lacks(client, cli_json, tmp_path):
    """Nothing read is not an empty answer: the CLI exits 2 and the API answers 400, with the same line."""
    text = "\x00 not a log \n" * 100
    (tmp_path / "x.log").write_text(text)
    code, expected = cli_json("logs", "parse", "--json", str(tmp_path / "x.log"))
    res = client.post("/api/logs/parse", json={"log": text})
    assert code == 2 and res.status_code == 400
    assert res.json()["error"]["message"] == expected["error"]["message"].replace(str(tmp_path / "x.log"), "log")
    assert "none of the lines SGLang writes at startup was found" in expected["error"]["message"]


def test_check_models_the_release_the_log_version_names(client):
    res = client.post("/api/logs/check", json={"log": (LOGS / RTX4090).read_text(), "command": RTX4090_CMD,
                                               "log_version": "0.5.21 (lmsysorg/sglang:v0.5.21)"}).json()
    assert (res["engine"]["version"], res["version_source"]) == ("0.5.21", "option")
    res = client.post("/api/logs/check", json={"log": "sglang: 0.5.20\n" + (LOGS / RTX4090).read_text(),
                                               "command": RTX4090_CMD}).json()
    assert (res["engine"]["version"], res["version_source"], res["log_version"]) == ("0.5.20", "log", "0.5.20")
