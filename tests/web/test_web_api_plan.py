"""/api/plan is `plan --json`; its command fed back to /api/explain on the same card gives the same memory picture."""

from __future__ import annotations

import pytest

TARGETS = [
    {"model": "Qwen/Qwen3.8-27B", "quant": "nvfp4", "gpu": "rtx5090", "request_length": 9216, "concurrency": 1,
     "spec": "dflash", "tune_mrr": True},
    {"model": "Qwen/Qwen3.8-27B", "gpu": "rtx5090", "request_length": 9216, "concurrency": 64},  # nothing fits
    {"model": "Qwen/Qwen3.5-9B", "gpu": "h100-80gb", "request_length": 4096, "concurrency": 32, "tp": 2,
     "tune_mrr": True, "extra": "--kv-cache-dtype fp8_e4m3"},
]
FLAGS = {"model": "--model", "quant": "--quant", "gpu": "--gpu", "request_length": "-L", "concurrency": "-C",
         "spec": "--spec", "tp": "--tp"}


def _argv(t: dict) -> list[str]:
    argv = ["plan", "--json"]
    for k, v in t.items():
        if k in FLAGS:
            argv += [FLAGS[k], str(v)]
        elif k == "tune_mrr" and v:
            argv.append("--tune-mrr")
    return argv + (["--", *t["extra"].split()] if "extra" in t else [])


@pytest.mark.parametrize("target", TARGETS)
def test_plan_is_the_cli_object(client, cli_json, target):
    code, expected = cli_json(*_argv(target))
    res = client.post("/api/plan", json=target)
    assert res.status_code == 200 and res.json() == expected
    assert code == (0 if expected["fits"] else 1)


def test_plan_command_explained_on_the_same_card_draws_the_same_picture(client):
    d = client.post("/api/plan", json=TARGETS[0]).json()
    assert d["fits"]
    e = client.post("/api/explain", json={"command": d["command"], "gpu": "rtx5090"}).json()
    got, want = dict(e["memory"]["breakdown"]), dict(d["breakdown"])
    assert got.pop("sources") == want.pop("sources")
    assert got == pytest.approx(want)
    assert e["max_running_requests"] == d["max_running_requests"]


def test_nothing_fits_says_why_and_what_to_change(client):
    d = client.post("/api/plan", json=TARGETS[1]).json()
    assert d["fits"] is False and d["command"] is None
    assert "GiB" in d["why"] and d["cheapest_change"] == d["changes_that_fit"][0]["change"]


@pytest.mark.parametrize("body,needle", [
    ({"model": "Qwen/Qwen3.8-27B", "request_length": 10, "concurrency": 1}, "plan needs a GPU"),
    ({"model": "Qwen/Qwen3.8-27B", "gpu": "h200", "request_length": 10, "concurrency": 1, "tp": 0}, "tp: Input should"),
    ({"model": "Qwen/Qwen3.8-27B", "gpu": "h200", "request_length": 10, "concurrency": 1, "max_mem_fraction": 1.5},
     "max_mem_fraction: Input should be less than 1"),
    ({"model": "x" * 300, "gpu": "h200", "request_length": 10, "concurrency": 1}, "model: String should have at most"),
])
def test_plan_bad_input(client, body, needle):
    res = client.post("/api/plan", json=body)
    assert res.status_code == 400 and needle in res.json()["error"]["message"]


def test_models_and_gpus_lists(client, cli_json):
    code, expected = cli_json("models", "--json")
    assert client.get("/api/models").json() == expected
    gpus = client.get("/api/gpus").json()["gpus"]
    assert {"rtx5090", "h200", "h100-80gb"} <= {g["id"] for g in gpus}
    assert next(g for g in gpus if g["id"] == "rtx5090")["memory_mib"] == 32_607
