"""/api/plan is `plan --json`; its command fed back to /api/explain on the same card gives the same memory picture."""

from __future__ import annotations

import pytest

TARGETS = [
    {"model": "Qwen/Qwen3.8-27B", "quant": "nvfp4", "gpu": "rtx5090", "request_length": 9216, "concurrency": 1,
     "spec": "dflash"},
    {"model": "Qwen/Qwen3.8-27B", "gpu": "rtx5090", "request_length": 9216, "concurrency": 64},  # nothing fits
    {"model": "Qwen/Qwen3.5-9B", "gpu": "h100-80gb", "request_length": 4096, "concurrency": 32, "tp": 2,
     "extra": "--kv-cache-dtype fp8_e4m3"},
]
FLAGS = {"model": "--model", "quant": "--quant", "gpu": "--gpu", "request_length": "-L", "concurrency": "-C",
         "spec": "--spec", "tp": "--tp"}


def _argv(t: dict) -> list[str]:
    argv = ["plan", "--json"]
    for k, v in t.items():
        if k in FLAGS:
            argv += [FLAGS[k], str(v)]
    tail = t.get("extra") or t.get("command")
    return argv + (["--", *tail.split()] if tail else [])


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
    ({"gpu": "h200", "request_length": 10, "concurrency": 1}, "plan needs --model or a launch command"),
    ({"command": "--kv-cache-dtype fp8_e4m3", "gpu": "h200", "request_length": 10, "concurrency": 1},
     "plan needs --model or a launch command"),
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


def _default_selection(client, page: str) -> tuple[dict, dict]:
    """A page's default selection as the web page sees it: the render, and explain of its command on the card."""
    from hybridplan.cookbook.pages import load_page

    d = client.post("/api/render", json={"page": page, "placeholders": {"NODE_RANK": "0"}}).json()
    gpu = next(h.gpu for h in load_page(page).hardware if h.id == d["selection"]["hw"])
    command = (d.get("effective") or d)["command"]
    e = client.post("/api/explain", json={"command": command, "gpu": gpu, "engine_version": d["engine_version"]}).json()
    return {**d, "gpu": gpu, "plan_command": command}, e


def test_plan_follows_the_h200_cells_deploy_command(client, cli_json):
    """The page's default selection (qwen3.8-27b, H200, FP8) fed to Plan as the Deploy command at the Calculator's L
    and C: Plan changes nothing, so it shows the cell's ratio 4.59 and the Calculator's pin; the CLI answers the same."""
    d, e = _default_selection(client, "qwen3.8-27b")
    assert d["gpu"] == "h200" and "--kv-cache-dtype fp8_e4m3" in d["plan_command"]
    C = e["max_running_requests"]
    body = {"command": d["plan_command"], "gpu": "h200", "request_length": d["calculator"]["request_length"],
            "concurrency": C, "engine_version": d["engine_version"]}
    p = client.post("/api/plan", json=body).json()
    assert p["fits"] and p["changes"] == []
    for flag in ("--kv-cache-dtype fp8_e4m3", "--mamba-ssm-dtype float32", "--chunked-prefill-size 32768",
                 "--mamba-full-memory-ratio 4.59"):
        assert flag in p["command"]
    q = client.post("/api/ratio", json={"command": d["plan_command"], "request_length": body["request_length"],
                                        "concurrency": C, "gpu": "h200", "engine_version": d["engine_version"]}).json()
    assert p["split"]["mamba_full_memory_ratio_text"] == "4.59" == d["ratio"]["cell"]["text"]
    assert p["split"]["max_mamba_cache_size_pin"] == q["max_mamba_cache_size_pin"]
    assert (p["max_mamba_cache_size"], p["max_total_num_tokens"]) == (e["max_mamba_cache_size"],
                                                                      e["max_total_num_tokens"])
    assert p["confidence"]["level"] in ("measured", "calibrated", "extrapolated")
    assert e["memory"]["verdict"]["confidence"]["level"] == p["confidence"]["level"]
    code, cli = cli_json("plan", "--json", "--gpu", "h200", "-L", str(body["request_length"]), "-C", str(C),
                         "--engine-version", d["engine_version"], "--", *d["plan_command"].replace("\\\n", " ").split())
    assert code == 0 and cli["command"] == p["command"] and cli["changes"] == []


@pytest.mark.parametrize("page", ["qwen3.8-27b", "kimi-k3", "qwen3-next-80b-a3b", "nemotron-nano-9b-v2"])
def test_plan_on_every_bundled_pages_default_selection_agrees_with_deploy(client, page):
    """Every bundled page's default selection: when Plan changes nothing, its ratio and pin are the Deploy command's
    and the Calculator's; when it changes something, each change names the flag, the old and new value and why."""
    d, e = _default_selection(client, page)
    if "error" in e or e.get("max_running_requests") is None:
        pytest.skip(f"{page}: the default selection does not size on its card ({e.get('error')})")
    C = e["max_running_requests"]
    L = d["calculator"]["request_length"] or 4096
    p = client.post("/api/plan", json={"command": d["plan_command"], "gpu": d["gpu"], "request_length": L,
                                       "concurrency": C, "engine_version": d["engine_version"]}).json()
    assert "error" not in p
    if p["fits"] and not p["changes"]:
        from hybridplan.engine.sglang.command import parse_command

        assert parse_command(p["command"]).argv == parse_command(d["plan_command"]).argv
        assert p["split"]["kept"] or p["split"]["kind"] in ("ratio", "pin")
        q = client.post("/api/ratio", json={"command": d["plan_command"], "request_length": L, "concurrency": C,
                                            "gpu": d["gpu"], "engine_version": d["engine_version"]}).json()
        assert p["split"]["max_mamba_cache_size_pin"] == q["max_mamba_cache_size_pin"]
    for c in p.get("changes", []):
        assert c["flag"].startswith("--") and c["old"] != c["new"] and c["why"]


def test_plan_refuses_a_command_and_a_model_together(client):
    res = client.post("/api/plan", json={"command": "--model-path Qwen/Qwen3.8-27B-FP8", "model": "Qwen/Qwen3.8-27B",
                                         "gpu": "h200", "request_length": 10, "concurrency": 1})
    assert res.status_code == 400 and res.json()["error"]["message"].startswith("command: give the launch command")
