"""POST /api/fleet answers what `fleet --json` prints (the page's Fleet panel shows that table), and bounds its input."""

from __future__ import annotations

BODY = {"model": "Qwen/Qwen3.5-9B", "gpu": "h100-80gb", "request_length": 32768, "concurrency": 64, "gpus_available": 4}


def test_the_api_answers_the_cli_json(client, cli_json):
    res = client.post("/api/fleet", json=BODY)
    assert res.status_code == 200
    code, d = cli_json("fleet", "--model", "Qwen/Qwen3.5-9B", "--gpu", "h100-80gb", "-L", "32768", "-C", "64",
                       "--gpus-available", "4", "--json")
    assert code == 0 and res.json() == d


def test_one_engine_and_bad_fields_are_answered_by_name(client):
    res = client.post("/api/fleet", json={**BODY, "engine": "vllm"})
    assert res.status_code == 200 and {r["engine"] for r in res.json()["rows"]} == {"vllm"}
    res = client.post("/api/fleet", json={**BODY, "gpus_per_node": 64})
    assert res.status_code == 400 and res.json()["error"]["message"].startswith("gpus_per_node:")
    res = client.post("/api/fleet", json={**BODY, "gpu": "nope"})
    assert res.status_code == 400 and res.json()["error"]["message"].startswith("unknown GPU 'nope'")
