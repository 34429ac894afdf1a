"""/api/explain is `explain --json`: the same object for the same input, the same errors, bounded input."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

Q27 = "python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B"
CASES = [
    (Q27 + " --mem-fraction-static 0.85", 66.50734375),
    (Q27, None),
    ("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1 sglang serve Qwen/Qwen3.8-27B --mamba-radix-cache-strategy extra_buffer_lazy "
     "--speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark", 38.2),
    ("python -m sglang.launch_server --model-path Qwen/Qwen3.5-9B --tp-size 2 --max-running-requests 8", 9.5),
]


def _cli_args(command: str, budget: float | None) -> list[str]:
    args = ["explain", "--json"]
    if budget is not None:
        args += ["--pool-budget-gib", repr(budget)]
    return args + ["--", *shlex.split(command)]


@pytest.mark.parametrize("command,budget", CASES)
def test_same_object_as_the_cli(client, cli_json, command, budget):
    code, expected = cli_json(*_cli_args(command, budget))
    res = client.post("/api/explain", json={"command": command, "pool_budget_gib": budget})
    assert code == 0 and res.status_code == 200
    assert res.json() == expected
    if budget == 66.50734375:  # the README's worked example
        got = res.json()
        assert (got["max_mamba_cache_size"], got["max_total_num_tokens"], got["max_running_requests"]) == (218, 575_225, 43)
        assert got["binding_limit"] == "state_pool"


def test_engine_refusal_is_422_with_the_cli_payload(client, cli_json):
    command = "--model-path Qwen/Qwen3.8-27B-FP8"
    code, expected = cli_json(*_cli_args(command, -7.96))
    res = client.post("/api/explain", json={"command": command, "pool_budget_gib": -7.96})
    assert code == 3 and res.status_code == 422
    assert res.json() == expected
    assert res.json()["error"]["message"].startswith("Not enough GPU memory for hybrid (mamba/linear-attention) state cache.")


@pytest.mark.parametrize("command,status,needle", [
    ("--model-path Qwen/Qwen3.8-27B --tp-size x", 400, "invalid int value"),
    ("--tp 2", 400, "required: --model-path"),
    ("--model-path Qwen/Qwen3.8-27B --speculative-algorithm MTP", 422, "Unknown speculative algorithm name: MTP"),
    ("rm -rf / --model-path Qwen/Qwen3.8-27B", 400, "not an SGLang server command"),
])
def test_errors_match_the_cli(client, cli_json, command, status, needle):
    code, expected = cli_json(*_cli_args(command, None))
    res = client.post("/api/explain", json={"command": command})
    assert res.status_code == status and code == {400: 2, 422: 3}[status]
    assert res.json() == expected and needle in res.json()["error"]["message"]


def test_unknown_model_names_the_places_the_server_looks(client, cli_json):
    """The CLI also looks at local paths; the server only at its catalog, its HF cache and allowed directories."""
    code, _ = cli_json(*_cli_args("--model-path nowhere/none", None))
    res = client.post("/api/explain", json={"command": "--model-path nowhere/none"})
    assert code == 2 and res.status_code == 400
    assert res.json()["error"]["message"].startswith("model 'nowhere/none' not found: not in the bundled catalog")
    assert "--allow-path DIR" in res.json()["error"]["message"]


@pytest.mark.parametrize("body,needle", [
    ({"command": ""}, "command: String should have at least 1 character"),
    ({"command": "x" * 16_385}, "command: String should have at most 16384 characters"),
    ({"command": Q27, "pool_budget_gib": 1e9}, "pool_budget_gib: Input should be less than or equal to 100000"),
    ({"command": Q27, "engine_version": "../../etc"}, "engine_version: String should match pattern"),
    ({"command": Q27, "unknown": 1}, "unknown: Extra inputs are not permitted"),
    ({}, "command: Field required"),
])
def test_validation_is_one_line_400(client, body, needle):
    res = client.post("/api/explain", json=body)
    assert res.status_code == 400
    err = res.json()["error"]
    assert err["type"] == "BadInput" and needle in err["message"] and "\n" not in err["message"]


def test_non_finite_budget_is_refused(client):
    res = client.post("/api/explain", content=b'{"command": "--model-path Qwen/Qwen3.8-27B", "pool_budget_gib": NaN}',
                      headers={"content-type": "application/json"})
    assert res.status_code == 400 and "finite" in res.json()["error"]["message"]


def test_unsupported_engine_version(client, cli_json):
    code, expected = cli_json("explain", "--json", "--engine-version", "0.4.0", "--", "--model-path", "Qwen/Qwen3.8-27B")
    res = client.post("/api/explain", json={"command": "--model-path Qwen/Qwen3.8-27B", "engine_version": "0.4.0"})
    assert code == 2 and res.status_code == 400 and res.json() == expected


def test_shell_syntax_is_never_run(client, tmp_path):
    target = tmp_path / "pwned"
    for cmd in (f"python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B $(touch {target})",
                f"python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B `touch {target}`",
                f"python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B; touch {target}",
                f"__import__('os').system('touch {target}')"):
        res = client.post("/api/explain", json={"command": cmd})
        assert res.status_code in (200, 400, 422)
    assert not target.exists()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(min_size=1, max_size=200))
def test_any_text_gets_an_answer_never_a_crash(client, text):
    res = client.post("/api/explain", json={"command": text})
    assert res.status_code in (200, 400, 422)
    body = res.json()
    assert "Traceback" not in res.text
    if res.status_code != 200:
        assert body["error"]["message"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.floats(min_value=-50, max_value=400, allow_nan=False))
def test_any_budget_matches_the_cli(client, cli_json, budget):
    command = "python -m sglang.launch_server --model-path Qwen/Qwen3.5-35B-A3B"
    code, expected = cli_json(*_cli_args(command, budget))
    res = client.post("/api/explain", json={"command": command, "pool_budget_gib": budget})
    assert res.json() == expected and res.status_code == {0: 200, 3: 422}[code]


@pytest.mark.parametrize("extra", [
    {"gpu": "h200"},
    {"gpu": "rtx5090", "gpu_memory_gib": 31.5},
    {"available_gib": 14.08, "pre_load_gib": 22.93},
    {"gpu": "h100-80gb", "weights_gib": 29.0},
])
def test_memory_timeline_matches_the_cli(client, cli_json, extra):
    command = "python -m sglang.launch_server --model-path Qwen/Qwen3.5-9B --mem-fraction-static 0.8"
    flags = {"gpu": "--gpu", "gpu_memory_gib": "--gpu-memory-gib", "available_gib": "--available-gib",
             "pre_load_gib": "--pre-load-gib", "weights_gib": "--weights-gib"}
    argv = ["explain", "--json"] + [a for k, v in extra.items() for a in (flags[k], str(v))]
    code, expected = cli_json(*argv, "--", *shlex.split(command))
    res = client.post("/api/explain", json={"command": command, **extra})
    assert res.json() == expected and res.status_code == {0: 200, 3: 422}[code]
    b = res.json()["memory"]["breakdown"]
    parts = [v for k, v in b.items() if k.endswith("_gib") and k != "capacity_gib" and v is not None]
    if b["capacity_gib"] is not None:  # on a card the parts add up to it
        assert sum(parts) == pytest.approx(b["capacity_gib"])
    assert b["kv_pool_gib"] * (1 << 30) == res.json()["allocated"]["kv_bytes"]


def test_unknown_gpu_is_bad_input(client):
    res = client.post("/api/explain", json={"command": Q27, "gpu": "tpu9"})
    assert res.status_code == 400 and "unknown GPU 'tpu9'" in res.json()["error"]["message"]


@pytest.mark.parametrize("extra", ["--disable-overlap-schedule", "--pp-size 2"])
def test_refusal_at_sizing_is_422_with_the_resolved_arguments(client, cli_json, extra):
    command = f"--model-path Qwen/Qwen3.8-27B-FP8 --mamba-radix-cache-strategy extra_buffer_lazy {extra}"
    code, expected = cli_json(*_cli_args(command, 40.0))
    res = client.post("/api/explain", json={"command": command, "pool_budget_gib": 40.0})
    assert code == 3 and res.status_code == 422
    got = res.json()
    assert got == expected
    assert got["error"]["message"].startswith("Lazy extra buffer requires overlap schedule")
    assert got["args"]["disable_overlap_schedule"]["value"] is True and got["slots_per_request"] is None
    assert got["state_bytes_per_slot"] == 153_944_064
