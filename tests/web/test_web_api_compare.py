"""/api/compare is `compare --json` and /api/explain with `engine: vllm` is `explain --engine vllm --json`: the same
object for the same input, and bad input a one-line 400 naming the field."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

COMPARE = [
    # (model, memory GiB, L, tp, kv dtype, gpu)
    ("Qwen/Qwen3.8-27B", 40.0, 32768, 1, "auto", "h200"),
    ("Qwen/Qwen3.5-9B", 12.5, 8192, 2, "fp8", None),
    ("Qwen/Qwen3.8-27B-FP8", 20.0, 131072, 1, "auto", "rtx5090"),
]


def _compare_args(model: str, memory: float, length: int, tp: int, kv: str, gpu: str | None) -> list[str]:
    args = ["compare", "--json", "--model", model, "--memory-gib", repr(memory), "-L", str(length), "--tp", str(tp),
            "--kv-cache-dtype", kv]
    return args + (["--gpu", gpu] if gpu else [])


@pytest.mark.parametrize("model,memory,length,tp,kv,gpu", COMPARE)
def test_compare_is_the_cli_object(client, cli_json, model, memory, length, tp, kv, gpu):
    code, expected = cli_json(*_compare_args(model, memory, length, tp, kv, gpu))
    res = client.post("/api/compare", json={"model": model, "memory_gib": memory, "request_length": length, "tp": tp,
                                            "kv_cache_dtype": kv, "gpu": gpu})
    assert code == 0 and res.status_code == 200
    assert res.json() == expected
    got = res.json()
    # each side's requests at L are its own pools' answer: SGLang's KV tokens // L under its running cap, vLLM's
    # logged concurrency under max_num_seqs
    s, v = got["sglang"], got["vllm"]
    assert s["requests_at_length"] == min(s["max_running_requests"], s["kv_tokens"] // length)
    cap = v["max_num_seqs"] if v["max_num_seqs"] is not None else v["requests_at_length"]  # no card: no default cap
    assert v["requests_at_length"] == min(int(v["max_concurrency"]), cap)
    assert len(got["why"]) == 3


def test_compare_worked_numbers_on_an_h200(client):
    """Qwen3.8-27B, 40 GiB of cache memory, 32k requests: SGLang's state pool binds at 10 full-length requests of
    its 345,292 KV tokens; vLLM's align mode pages 832-token blocks, 9 of a request's 49 blocks state pages."""
    got = client.post("/api/compare", json={"model": "Qwen/Qwen3.8-27B", "memory_gib": 40, "request_length": 32768,
                                            "gpu": "h200"}).json()
    s, v = got["sglang"], got["vllm"]
    assert (s["kv_tokens"], s["state_slots"], s["slots_per_request"], s["requests_at_length"]) == (345_292, 131, 5, 10)
    assert (v["kv_tokens"], v["block_size"], v["blocks_per_request"], v["state_pages_per_request"],
            v["requests_at_length"]) == (526_294, 832, 49, 9, 16)


def test_compare_from_the_card_alone_is_the_cli_object(client, cli_json):
    code, expected = cli_json("compare", "--json", "--model", "Qwen/Qwen3.6-35B-A3B", "--gpu", "h200", "-L", "131072")
    res = client.post("/api/compare", json={"model": "Qwen/Qwen3.6-35B-A3B", "request_length": 131072, "gpu": "h200"})
    assert code == 0 and res.status_code == 200 and res.json() == expected
    assert expected["memory_gib"] is None and expected["sglang"]["cache_memory_gib"] > 0
    res = client.post("/api/compare", json={"model": "Qwen/Qwen3.6-35B-A3B", "request_length": 131072})
    assert res.status_code == 400 and res.json()["error"]["message"].startswith("--memory-gib: give the cache memory")


def test_compare_models_the_vllm_release_asked_for(client, cli_json):
    args = ["--model", "Qwen/Qwen3.5-27B", "--memory-gib", "40", "-L", "131072", "--vllm-version", "0.20.1"]
    code, expected = cli_json("compare", "--json", *args)
    res = client.post("/api/compare", json={"model": "Qwen/Qwen3.5-27B", "memory_gib": 40, "request_length": 131072,
                                            "vllm_version": "0.20.1"})
    assert code == 0 and res.status_code == 200 and res.json() == expected and expected["vllm"]["version"] == "0.20.1"
    res = client.post("/api/compare", json={"model": "Qwen/Qwen3.5-27B", "memory_gib": 40, "request_length": 131072,
                                            "vllm_version": "0.19.0"})
    assert res.status_code == 400 and "vLLM 0.19.0 is not modelled" in res.json()["error"]["message"]
    assert res.json()["error"]["message"].startswith("--vllm-version: ")  # the field compare takes, not explain's


VLLM = [
    ("vllm serve Qwen/Qwen3.8-27B --max-model-len 32768", 40.0, "h200"),
    ("vllm serve Qwen/Qwen3.8-27B-FP8 --kv-cache-dtype fp8 --max-model-len 65536 --enable-prefix-caching", 11.2,
     "rtx5090"),
    ("vllm serve Qwen/Qwen3.5-9B -tp 2", None, None),
    ("vllm serve Qwen/Qwen3.8-27B --max-model-len 32768", None, "h200"),  # sized from the card alone
]


@pytest.mark.parametrize("command,memory,gpu", VLLM)
def test_vllm_explain_is_the_cli_object(client, cli_json, command, memory, gpu):
    args = ["explain", "--json", "--engine", "vllm"] + (["--kv-memory-gib", repr(memory)] if memory else []) + \
        (["--gpu", gpu] if gpu else []) + ["--", *shlex.split(command)]
    code, expected = cli_json(*args)
    res = client.post("/api/explain", json={"command": command, "engine": "vllm", "kv_memory_gib": memory, "gpu": gpu})
    # a launch vLLM refuses (more max_num_seqs than Mamba cache blocks under full CUDA graphs) is the CLI's exit 3
    # and the web's 422, the same object on both
    refused = expected.get("verdict") is not None and not expected["verdict"]["serves"]
    assert (code, res.status_code) == ((3, 422) if refused else (0, 200))
    assert res.json() == expected
    if refused:
        v = expected["verdict"]
        assert v["phase"] == "cuda_graph" and v["message"] == expected["error"]["message"]
        assert f"max_num_seqs ({v['max_num_seqs']}) exceeds available Mamba cache blocks ({v['num_blocks']})" \
            in v["message"] and v["num_blocks"] == expected["num_blocks"] < v["max_num_seqs"]
    got = res.json()
    assert got["engine"]["name"] == "vllm"
    if memory is None and gpu is None:
        assert got["kv_cache_tokens"] is None and got["num_blocks"] is None
    elif memory is None:  # the card's memory timeline gives the available KV memory
        assert got["memory"]["source"] == "card"
        gib = got["available_kv_memory_bytes"] / 2**30
        assert round(gib, 2) == got["memory"]["available_kv_gib"]
        assert abs(gib - got["memory"]["timeline"]["available_gib"]["value"]) < 1e-3
    else:
        assert got["available_kv_memory_bytes"] == int(memory * 2**30)
        assert f"GPU KV cache size: {got['kv_cache_tokens']:,} tokens" in got["predicted_lines"]


@pytest.mark.parametrize("body,status,needle", [
    ({"command": "vllm serve Qwen/Qwen3.8-27B", "engine": "vllm", "pool_budget_gib": 40}, 400, "pool_budget_gib: "),
    ({"command": "vllm serve Qwen/Qwen3.8-27B", "engine": "vllm", "config": {}}, 400, "config: "),
    ({"command": "--model-path Qwen/Qwen3.8-27B", "kv_memory_gib": 40}, 400, "kv_memory_gib: "),
    ({"command": "vllm serve Qwen/Qwen3.8-27B", "engine": "trt"}, 400, "engine: "),
    ({"command": "vllm serve Qwen/Qwen3.8-27B", "engine": "vllm", "kv_memory_gib": 0}, 400, "kv_memory_gib: "),
    ({"command": "python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B", "engine": "vllm"}, 400,
     "not a vLLM server command"),
])
def test_vllm_explain_bad_input_names_the_field(client, body, status, needle):
    res = client.post("/api/explain", json=body)
    assert res.status_code == status and needle in res.json()["error"]["message"]
    assert "\n" not in res.json()["error"]["message"]


@pytest.mark.parametrize("extra,needle", [
    ({"kv_cache_dtype": "int4"}, "kv_cache_dtype: "),
    ({"memory_gib": 0}, "memory_gib: "),
    ({"request_length": 0}, "request_length: "),
    ({"gpu": "../etc"}, "gpu: "),
    ({"model": "/etc/passwd"}, "not in the bundled catalog"),
])
def test_compare_bad_input_is_a_400_naming_the_field(client, extra, needle):
    body = {"model": "Qwen/Qwen3.8-27B", "memory_gib": 40, "request_length": 32768, **extra}
    res = client.post("/api/compare", json=body)
    assert res.status_code == 400 and needle in res.json()["error"]["message"]


# -- any vLLM command: a shaped answer, never a 500 ----------------------------------------------------------------

SIZING_FLAGS = ["--max-model-len", "--block-size", "--mamba-block-size", "--mamba-cache-mode", "--max-num-seqs",
                "--max-num-batched-tokens", "--kv-cache-dtype", "--mamba-cache-dtype", "--mamba-ssm-cache-dtype",
                "--gpu-memory-utilization", "-tp", "--enable-prefix-caching", "--no-enable-prefix-caching",
                "--speculative-config", "--dtype"]
VALUES = st.one_of(st.integers(-2**70, 2**70).map(str), st.floats(allow_nan=True).map(str),
                   st.sampled_from(["auto", "align", "all", "none", "fp8", "float32", "bfloat16", "-1", "1k", "{}",
                                    '{"method": "mtp", "num_speculative_tokens": 3}']),
                   st.text(max_size=12))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flags=st.lists(st.tuples(st.sampled_from(SIZING_FLAGS), VALUES), max_size=4),
       memory=st.none() | st.floats(0.001, 200), gpu=st.sampled_from([None, "h200", "rtx5090", "a100-80gb", "b200", "mi355x", "dgx-spark"]))
def test_any_vllm_command_gets_a_shaped_answer(client, flags, memory, gpu):
    command = "vllm serve Qwen/Qwen3.8-27B " + shlex.join([t for pair in flags for t in pair])
    res = client.post("/api/explain", json={"command": command, "engine": "vllm", "kv_memory_gib": memory, "gpu": gpu})
    assert res.status_code in (200, 400, 422), (command, res.text)
    data = res.json()
    if res.status_code != 200:
        assert data["error"]["message"] and "\n" not in data["error"]["message"], (command, data)
    elif memory is not None:
        assert data["kv_cache_tokens"] >= 0 and data["available_kv_memory_bytes"] == int(memory * 2**30)
    elif gpu is None:
        assert data["kv_cache_tokens"] is None


def _catalog_ids() -> list[str]:
    from hybridplan.models.catalog import listing

    return [m["id"] for m in listing()]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=st.sampled_from(_catalog_ids()), memory=st.floats(0.001, 16384), length=st.integers(1, 10_000_000),
       tp=st.sampled_from([1, 2, 3, 8, 1024]), kv=st.sampled_from(["auto", "fp8"]),
       gpu=st.sampled_from([None, "h200", "rtx3090", "b300", "mi300x"]))
def test_any_catalog_compare_gets_a_shaped_answer(client, model, memory, length, tp, kv, gpu):
    res = client.post("/api/compare", json={"model": model, "memory_gib": memory, "request_length": length, "tp": tp,
                                            "kv_cache_dtype": kv, "gpu": gpu})
    assert res.status_code in (200, 400, 422), (model, memory, length, tp, kv, gpu, res.text)
    data = res.json()
    if res.status_code != 200:
        assert data["error"]["message"] and "\n" not in data["error"]["message"]
    else:  # each engine answers: its numbers, or why it has none (it would not start, or it is not modelled)
        for engine in ("sglang", "vllm"):
            leg = data[engine]
            if leg.get("requests_at_length") is not None:
                assert leg["requests_at_length"] >= 0
            else:
                assert ((leg.get("error") or {}).get("message") or (leg.get("verdict") or {}).get("why")), leg


LOG_652 = (Path(__file__).resolve().parents[1] / "fixtures" / "vllm" / "club3090-652-rtx5090.log").read_text()
# https://github.com/noonghunna/club-3090/issues/652 (RTX 5090), an excerpt; its model path mapped to the catalog id


@pytest.mark.parametrize("gpu,version", [("rtx5090", None), (None, "0.33.0")])
def test_logs_check_with_engine_vllm_is_the_cli_object(client, cli_json, tmp_path, gpu, version):
    """club-3090#652's boot: explained under its own 0.24.0 on its card; under 0.33.0 the GDN prefill checkpoints
    raise the block and the logged tokens are not predicted (still a 200, `explained: false`, as the CLI's exit 1)."""
    log = tmp_path / "vllm.log"
    log.write_text(LOG_652)
    code, expected = cli_json("logs", "check", "--engine", "vllm", "--json", *(["--gpu", gpu] if gpu else []),
                              *(["--engine-version", version] if version else []), str(log))
    res = client.post("/api/logs/check", json={"log": LOG_652, "engine": "vllm", "gpu": gpu, "engine_version": version})
    assert res.status_code == 200 and res.json() == expected
    assert (code, expected["explained"]) == ((0, True) if version is None else (1, False))


@pytest.mark.parametrize("body,needle", [
    ({"log": "INFO GPU KV cache size: 1,000 tokens\n", "engine": "vllm"}, "non-default args"),
    ({"log": LOG_652, "engine": "vllm", "log_version": "0.5.23"}, "log_version: an sglang build"),
    ({"log": "x", "command": "--model-path Qwen/Qwen3.5-9B", "gpu": "h200"}, "gpu: not taken with `engine: sglang` (only with `engine: vllm`)"),
    ({"log": "x"}, "command: the launch command that wrote the log is required for an sglang log"),
    ({"log": LOG_652, "engine": "tgi"}, "engine: Input should be 'sglang' or 'vllm'"),
])
def test_logs_check_bad_engine_input_is_a_400_naming_the_field(client, body, needle):
    res = client.post("/api/logs/check", json=body)
    assert res.status_code == 400 and needle in res.json()["error"]["message"]
    assert "\n" not in res.json()["error"]["message"]
