"""/api/pages, /api/render and /api/ratio are `cookbook list`, `cookbook render` and `ratio` with `--json`."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

QWEN = "qwen3.8-27b"


def _render_argv(page: str, picks: dict, docker: bool = False) -> list[str]:
    argv = ["cookbook", "render", page, "--json"] + (["--docker"] if docker else [])
    for dim, option in picks.items():
        argv += [f"--{dim}", option]
    return argv


def test_pages_is_cookbook_list(client, cli_json):
    code, expected = cli_json("cookbook", "list", "--json")
    res = client.get("/api/pages")
    assert code == 0 and res.status_code == 200 and res.json() == expected
    assert QWEN in [p["id"] for p in res.json()["pages"]]


def test_page_layout_lists_rows_in_panel_order(client):
    d = client.get(f"/api/pages/{QWEN}").json()
    assert [r["id"] for r in d["rows"]] == ["hw", "variant", "quant", "nodes", "spec", "tier", "ssm-dtype"]
    assert [r["kind"] for r in d["rows"]].count("overlay") == 3
    assert d["workload"] == {"request_length": 5120, "concurrency": 64}
    assert {"id": "rtx5090", "label": "RTX 5090", "group": "blackwell", "gpu": "rtx5090"} in d["hardware"]


@pytest.mark.parametrize("picks,docker", [
    ({}, False),
    ({"hw": "rtx5090", "quant": "nvfp4-fp4-head", "spec": "dflash", "tier": "high-throughput", "ssm-dtype": "float32"},
     False),
    ({"hw": "h200", "quant": "fp8", "spec": "eagle"}, True),
    ({"hw": "h200", "quant": "nvfp4-fp4-head"}, False),  # reseated: H200 has no FP4 tensor cores
])
def test_render_is_the_cli_object(client, cli_json, picks, docker):
    code, expected = cli_json(*_render_argv(QWEN, picks, docker))
    res = client.post("/api/render", json={"page": QWEN, "picks": picks, "docker": docker})
    assert code == 0 and res.status_code == 200
    assert res.json() == expected


def test_greyed_option_carries_its_reason(client):
    d = client.post("/api/render", json={"page": QWEN, "picks": {"hw": "h200", "quant": "nvfp4-fp4-head"}}).json()
    assert d["reseated"] == [{"dim": "quant", "from": "nvfp4-fp4-head", "to": "bf16",
                              "reason": "H200 (SM90) has no FP4 tensor cores; the NVFP4 checkpoints need Blackwell"}]
    nvfp4 = {o["id"]: o for o in d["options"]["quant"]}["nvfp4-fp4-head"]
    assert nvfp4["disabled"] and "FP4 tensor cores" in nvfp4["reason"]


def test_page_workload_is_the_default_and_calculator_L_C_repin_the_ratio(client, cli_json):
    picks = {"hw": "rtx5090", "quant": "nvfp4-fp4-head", "spec": "dflash"}
    same = client.post("/api/render", json={"page": QWEN, "picks": picks, "request_length": 5120,
                                            "concurrency": 64}).json()
    _, expected = cli_json(*_render_argv(QWEN, picks))
    assert same == expected
    mine = client.post("/api/render", json={"page": QWEN, "picks": picks, "request_length": 9216,
                                            "concurrency": 1}).json()
    pinned = mine["ratio"]["base"]["text"]
    assert mine["ratio"]["pinned"] == "calculator" and f"--mamba-full-memory-ratio {pinned}" in mine["flags"]
    assert pinned != expected["ratio"]["base"]["text"]
    # the number pinned for L, C is the planner's ratio for that command, as `hybridplan ratio` prints it
    code, q = cli_json("ratio", "--json", "-L", "9216", "-C", "1", "--", mine["command"])
    assert code == 0 and q["mamba_full_memory_ratio_text"] == pinned
    assert q["max_mamba_cache_size_pin"] == mine["ratio"]["base"]["max_mamba_cache_size_pin"]


@pytest.mark.parametrize("body,status,needle", [
    ({"page": "nope"}, 400, "unknown cookbook page 'nope'"),
    ({"page": "evil.yaml"}, 400, "unknown cookbook page"),
    ({"page": "../etc/passwd"}, 400, "page: String should match pattern"),
    ({"page": QWEN, "picks": {"hw": "tpu"}}, 400, "'tpu' is not an option of hw"),
    ({"page": QWEN, "picks": {"color": "red"}}, 400, "has no dimension 'color'"),
    ({"page": QWEN, "picks": {f"d{i}": "x" for i in range(40)}}, 400, "picks: Dictionary should have at most 32"),
    ({"page": QWEN, "request_length": 0}, 400, "request_length: Input should be greater than or equal to 1"),
    ({"page": QWEN, "placeholders": {"PORT": "x" * 300}}, 400, "String should have at most 256 characters"),
])
def test_render_bad_input(client, body, status, needle):
    res = client.post("/api/render", json=body)
    assert res.status_code == status and needle in res.json()["error"]["message"]


def test_render_pick_errors_match_the_cli(client, cli_json):
    code, expected = cli_json(*_render_argv(QWEN, {"quant": "int3"}))
    res = client.post("/api/render", json={"page": QWEN, "picks": {"quant": "int3"}})
    assert code == 2 and res.status_code == 400 and res.json() == expected


@pytest.mark.parametrize("gpu,budget", [(None, None), ("h200", None), (None, 38.2)])
def test_ratio_is_the_cli_object(client, cli_json, gpu, budget):
    command = ("python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B-FP8 --kv-cache-dtype fp8_e4m3 "
               "--mem-fraction-static 0.85 --speculative-algorithm EAGLE")
    argv = ["ratio", "--json", "-L", "5120", "-C", "64"]
    argv += ["--gpu", gpu] if gpu else []
    argv += ["--pool-budget-gib", str(budget)] if budget else []
    code, expected = cli_json(*argv, "--", *shlex.split(command))
    res = client.post("/api/ratio", json={"command": command, "request_length": 5120, "concurrency": 64,
                                          "gpu": gpu, "pool_budget_gib": budget})
    assert code == 0 and res.status_code == 200 and res.json() == expected


def test_ratio_docs_worked_example(client):
    """cookbook-semantics: h200 / fp8 / EAGLE defaults -> S = 5, D = 4 on fp8 KV (plus the folded draft KV)."""
    d = client.post("/api/ratio", json={"command": "--model-path Qwen/Qwen3.8-27B-FP8 --kv-cache-dtype fp8_e4m3 "
                                                  "--speculative-algorithm EAGLE", "request_length": 5120,
                                        "concurrency": 64}).json()
    assert (d["slots_per_request"], d["draft_states_per_request"], d["state_bytes_per_slot"]) == (5, 4, 153_944_064)
    assert d["kv_bytes_per_token_target"] == 32_768
    assert d["max_mamba_cache_size_pin"] == 64 * 5


def test_ratio_unknown_gpu_is_the_cli_error(client, cli_json):
    code, expected = cli_json("ratio", "--json", "-L", "100", "-C", "1", "--gpu", "tpu9", "--", "--model-path",
                              "Qwen/Qwen3.8-27B")
    res = client.post("/api/ratio", json={"command": "--model-path Qwen/Qwen3.8-27B", "request_length": 100,
                                          "concurrency": 1, "gpu": "tpu9"})
    assert code == 2 and res.status_code == 400 and res.json() == expected


@st.composite
def _picks(draw):
    from hybridplan.cookbook.pages import load_page
    from hybridplan.cookbook.selection import rows

    page_id = draw(st.sampled_from(["qwen3.8-27b", "kimi-k3", "qwen3-next-80b-a3b", "nemotron-nano-9b-v2"]))
    picks = {}
    for row in rows(load_page(page_id)):
        if draw(st.booleans()):
            picks[row.id] = draw(st.sampled_from([o.id for o in row.options]))
    return page_id, picks


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_picks())
def test_any_selection_renders_as_the_cli_does(client, cli_json, case):
    page_id, picks = case
    code, expected = cli_json(*_render_argv(page_id, picks))
    res = client.post("/api/render", json={"page": page_id, "picks": picks})
    assert code == 0 and res.status_code == 200 and res.json() == expected


def test_render_playground_env_is_the_cli_object_with_base_and_effective_calculators(client, cli_json):
    """set_flags / set_env are `cookbook render --add-flag / --add-env`: the calculator reads the base command with
    the Deploy env and the effective one with the playground env (cookbook-semantics §7.5)."""
    picks = {"hw": "h200", "quant": "fp8", "spec": "eagle"}
    flag, env = "--mamba-radix-cache-strategy extra_buffer_lazy", "SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1"
    code, expected = cli_json(*_render_argv(QWEN, picks), "--add-flag", flag, "--add-env", env)
    res = client.post("/api/render", json={"page": QWEN, "picks": picks, "set_flags": [flag], "set_env": [env]})
    assert code == 0 and res.status_code == 200 and res.json() == expected
    calc = res.json()["calculator"]
    assert calc["base"]["env"] == [] and calc["effective"]["env"] == [env]
    assert (calc["base"]["ratio"]["slots_per_request"], calc["effective"]["ratio"]["slots_per_request"]) == (5, 3)


def test_render_carries_the_rest_of_the_docs_page(client):
    d = client.post("/api/render", json={"page": QWEN, "picks": {"hw": "rtx5090", "quant": "nvfp4-bf16-head",
                                                                 "spec": "dflash", "ssm-dtype": "bfloat16"}}).json()
    assert [w["requires"] for w in d["build_warnings"]] == ["sgl-project/sglang#35496"]
    assert d["install"]["docker"]["carries_pin"] is True
    assert [e["id"] for e in d["examples"]] == ["thinking", "no-thinking", "tool-calling", "vision"]
    assert [a["eval"] for a in d["accuracy"]] == ["gsm8k"] and d["benchmarks"][0]["concurrency"] == 1


@pytest.mark.parametrize("set_env,needle", [(["NOEQUALS"], "String should match pattern"),
                                            (["A=1"] * 9, "List should have at most 8 items")])
def test_render_bad_set_env(client, set_env, needle):
    res = client.post("/api/render", json={"page": QWEN, "set_env": set_env})
    assert res.status_code == 400 and needle in res.json()["error"]["message"]


def test_render_models_the_page_with_the_release_asked(client):
    res = client.post("/api/render", json={"page": "qwen3.8-27b", "picks": {"hw": "rtx5090"}, "engine_version": "0.5.19"})
    assert res.status_code == 200 and res.json()["engine_version"] == "0.5.19"
    res = client.post("/api/render", json={"page": "qwen3.8-27b", "engine_version": "0.4.0"})
    assert res.status_code == 400 and "0.4.0" in res.json()["error"]["message"]


@pytest.mark.parametrize("picks", [{}, {"hw": "rtx5090", "quant": "nvfp4-fp4-head", "spec": "dflash"}])
def test_the_badge_and_the_memory_confidence_agree(client, picks):
    """What the Deploy panel does: render the selection, then explain its command on its card under the page's
    release (the Memory picture): a Verified cell the page measured is 'measured' in both, from the same launch."""
    d = client.post("/api/render", json={"page": QWEN, "picks": picks}).json()
    gpu = next(h["gpu"] for h in client.get(f"/api/pages/{QWEN}").json()["hardware"] if h["id"] == d["selection"]["hw"])
    e = client.post("/api/explain", json={"command": d["command"], "gpu": gpu,
                                          "engine_version": d["engine_version"]}).json()
    memory = e["memory"]["verdict"]["confidence"]
    assert d["badge"] == "verified" and d["badge_evidence"]["backs_badge"] is True
    assert (memory["level"], memory["basis"]) == (d["badge_evidence"]["level"], d["badge_evidence"]["basis"])
    assert memory["level"] == "measured"
