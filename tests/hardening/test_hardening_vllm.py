"""The vLLM surfaces held to the SGLang ones' contract (issue 27): every hostile input is a one-line error naming
the field (exit 2) or a correct answer, never a traceback, never NaN in JSON; the surfaces agree on what is valid;
sizes are bounded before any work. (Linear time: tests/engine/vllm/test_vllm_parse_linear.py; the web:
tests/web/test_web_api_fuzz.py.)"""

from __future__ import annotations

import json

import pytest
from hardening_support import PEAK_BOUND, measure
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridplan.errors import BadInput, HybridPlanError
from tests.vllm_inputs import LOG_652, SUMMARY_1087, V, mutated_logs, vllm_launches

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])


def _log(tmp_path, text: str):
    path = tmp_path / "boot.log"
    path.write_text(text)
    return str(path)


BIG = "9" * 5000


@pytest.mark.parametrize("old,new,field", [
    ("Available KV cache memory: 6.01 GiB", "Available KV cache memory: 1.2.3 GiB", "Available KV cache memory"),
    ("Available KV cache memory: 6.01 GiB", f"Available KV cache memory: {BIG} GiB", "Available KV cache memory"),
    ("Available KV cache memory: 6.01 GiB", f"Available KV cache memory: {'1' * 400}.5 GiB",
     "Available KV cache memory"),  # a 400-digit figure was an infinity, then NaN in --json
    ("Available KV cache memory: 6.01 GiB", "Available KV cache memory: 6,01 GiB", "Available KV cache memory"),
    ("GPU KV cache size: 569,878 tokens", "GPU KV cache size: 569.878.1 tokens", "GPU KV cache size"),
    ("GPU KV cache size: 569,878 tokens", f"GPU KV cache size: {BIG} tokens", "GPU KV cache size"),
    ("GPU KV cache size: 569,878 tokens", "GPU KV cache size: 5,69,878 tokens", "GPU KV cache size"),
    ("131,072 tokens per request: 4.35x", "131,072 tokens per request: 4.3.5x", "Maximum concurrency"),
    ("131,072 tokens per request: 4.35x", f"{BIG} tokens per request: 4.35x", "Maximum concurrency"),
    ("131,072 tokens per request: 4.35x", "13,1072 tokens per request: 4.35x", "Maximum concurrency"),
    ("'max_num_seqs': 1,", "'max_num_seqs': 1, 'block_size': 16.5,", "--block-size"),  # was a TypeError in lcm
    ("'max_num_seqs': 1,", "'max_num_seqs': 1, 'block_size': 1e999,", "--block-size"),
    ("'max_num_seqs': 1,", f"'max_num_seqs': {'9' * 400},", "--max-num-seqs"),
    ("'max_num_seqs': 1,", "'max_num_seqs': 1, 'speculative_config': {'method': 'mtp', 'x': 1e999},",
     "--speculative-config.x"),
])
def test_bad_numbers_in_a_vllm_boot_log_are_one_line_naming_the_field(refused, tmp_path, old, new, field):
    assert old in LOG_652
    path = _log(tmp_path, LOG_652.replace(old, new))
    refused(["logs", "check", "--engine", "vllm", path], field, json_at=2)
    if "'" not in old:  # the parse reads the capacity lines too (the args line is kept as text)
        refused(["logs", "parse", "--engine", "vllm", path], field, json_at=2)


@pytest.mark.parametrize("old,new,field", [
    ("(30.27/31.4 GiB)", "(30.27/31.4.1 GiB)", "startup memory summary: total"),
    ("(0.92, 28.88 GiB)", "(9.2, 28.88 GiB)", "startup memory summary: utilization"),
    ("12.26 GiB.", f"{'1' * 38}.5 GiB.", "startup memory summary: kv cache memory in use"),
    ("0.13 GiB (estimated)", "0.1.3 GiB (estimated)", "CUDA graph memory estimate"),
])
def test_bad_numbers_in_the_startup_memory_summary(refused, tmp_path, old, new, field):
    assert old in SUMMARY_1087
    refused(["logs", "parse", "--engine", "vllm", _log(tmp_path, SUMMARY_1087.replace(old, new, 1))], field, json_at=2)


@pytest.mark.parametrize("flags,field", [
    (["--speculative-config", '{"method":"mtp","num_speculative_tokens":1,"x":NaN}'], "`x`: NaN"),
    (["-sc", '{"method":"mtp","num_speculative_tokens":1,"x":-Infinity}'], "`x`: -Infinity"),
    (["-dc", '{"a": [1, NaN]}'], "`a[1]`: NaN"),
    (["--speculative-config", '{"method":"mtp","num_speculative_tokens":' + "9" * 400 + "}"],
     "`num_speculative_tokens`: an integer of 400 digits"),
    (["-sc.x", "1e999"], "`x`: Infinity"),
    (["--compilation-config", '{"max_cudagraph_capture_size": 1e400}'], "`max_cudagraph_capture_size`: 1e400"),
])
@pytest.mark.parametrize("surface", ["explain", "plan"])
def test_a_json_valued_flag_with_nan_is_refused_by_name(refused, surface, flags, field):
    where = ["explain", "--engine", "vllm", "--kv-memory-gib", "6"] if surface == "explain" else \
        ["plan", "--engine", "vllm", "--gpu", "rtx5090", "-L", "4096", "-C", "1"]
    err = refused([*where, "--", *V, *flags], field)
    assert err.startswith("error: vllm serve: error: argument ")


@pytest.mark.parametrize("flags,field", [
    (["--max-model-len", "9" * 5000], "--max-model-len"), (["--max-num-seqs", "9" * 5000], "--max-num-seqs"),
    (["--gpu-memory-utilization", "1" * 400 + ".5"], "--gpu-memory-utilization"),
    (["--max-model-len", "1" * 40 + "k"], "--max-model-len"), (["-tp", "nan"], "--tensor-parallel-size"),
])
def test_an_enormous_number_in_a_flag_is_one_short_line(refused, flags, field):
    err = refused(["explain", "--engine", "vllm", "--kv-memory-gib", "6", "--", *V, *flags], field)
    assert len(err) < 400


def test_the_json_writers_refuse_a_non_finite_number_as_a_last_guard(cli, monkeypatch):
    """Whatever reaches the CLI's emit_json or the web's CliJSON with a NaN is refused naming the field, never
    written as `NaN` (not JSON)."""
    from hybridplan.engine.vllm.serving import surface

    monkeypatch.setattr(surface.VllmServing, "explain", lambda self, req: {"memory": {"kv_gib": float("nan")}})
    code, out, err = cli("explain", "--json", "--engine", "vllm", "--", *V)
    assert code == 2 and json.loads(out)["error"]["message"] == \
        "output: `memory.kv_gib` is not a finite number (JSON has no NaN or Infinity)"
    from fastapi.testclient import TestClient

    from hybridplan.web.app import create_app
    from hybridplan.web.hosts import HostPolicy

    res = TestClient(create_app(hosts=HostPolicy(allowed=("testserver",)))).post(
        "/api/explain", json={"engine": "vllm", "command": " ".join(V)})
    assert res.status_code == 400 and "NaN" not in res.text.replace("no NaN", "")
    assert res.json()["error"]["message"].startswith("output: `memory.kv_gib`")


# ------------------------------------------------------------------------------ one definition of what is valid

@pytest.mark.parametrize("argv,field", [
    (["explain", "--engine", "vllm", "--kv-memory-gib", "0", "--", *V], "--kv-memory-gib"),
    (["plan", "--engine", "vllm", "--gpu", "h200", "-L", "4096", "-C", "1", "--kv-memory-gib", "0", "--", *V],
     "--kv-memory-gib"),
    (["plan", "--engine", "vllm", "--gpu", "h200", "-L", "4096", "-C", "1", "--max-util", "0", "--", *V],
     "--max-util"),
    (["plan", "--engine", "vllm", "--gpu", "h200", "-L", "4096", "-C", "1", "--max-util", "1.5", "--", *V],
     "--max-util"),
    (["compare", "--model", "Qwen/Qwen3.5-27B", "--memory-gib", "0", "-L", "4096"], "--memory-gib"),
    (["explain", "--engine", "vllm", "--kv-memory-gib", "nan", "--", *V], "--kv-memory-gib"),
])
def test_zero_and_non_finite_memory_are_refused_on_every_surface(refused, argv, field):
    refused(argv, field)


def test_the_api_holds_the_same_bounds_as_the_cli():
    from hybridplan.engine.requests import FIELD_BOUNDS, ExplainRequest, PlanRequest
    from hybridplan.web import schemas

    for model, name in ((schemas.ExplainRequest, "kv_memory_gib"), (schemas.PlanRequest, "kv_memory_gib"),
                        (schemas.PlanRequest, "max_util"), (schemas.CompareRequest, "memory_gib")):
        prop = model.model_json_schema()["properties"][name]
        number = next((p for p in prop.get("anyOf", [prop]) if p.get("type") == "number"))
        bound = FIELD_BOUNDS[name]
        assert (number["exclusiveMinimum"], number["maximum"]) == (bound.lo, bound.hi) and bound.lo_open
    with pytest.raises(BadInput, match="--kv-memory-gib: 0.0 is outside above 0 and at most 16384"):
        ExplainRequest(command="vllm serve m", kv_memory_gib=0.0)
    with pytest.raises(BadInput, match="--max-util: nan is not a finite number"):
        PlanRequest(request_length=1, concurrency=1, max_util=float("nan"))


@pytest.mark.parametrize("spelling", [["--max-model-len=auto"], ["--max-model-len", "auto"], ["--max-model-len", "-1"],
                                      ["--max_model_len=AUTO"]])
def test_auto_fit_is_one_value_however_it_is_spelled(cli_json, spelling):
    code, out = cli_json("explain", "--json", "--engine", "vllm", "--kv-memory-gib", "1", "--", *V, *spelling)
    assert code == 0 and out["max_model_len"] == 41344  # fitted to 1 GiB (_auto_fit_max_model_len)


# ------------------------------------------------------------------------------ sizes bounded before any work

@pytest.mark.parametrize("surface", ["explain", "plan"])
def test_a_hundred_thousand_repeated_flags_are_refused_before_any_work(refused, surface):
    where = ["explain", "--engine", "vllm"] if surface == "explain" else \
        ["plan", "--engine", "vllm", "--gpu", "h200", "-L", "4096", "-C", "1"]
    err = refused([*where, "--", *V, *["-tp=1"] * 100_000], "launch command")
    assert "100,003 words, over the bound of 4,096" in err


def test_repeated_flags_cost_little_memory():
    from hybridplan.engine.vllm.command import parse_command

    peak, raised = measure(lambda: parse_command(" ".join([*V, *["-tp=1"] * 100_000])))
    assert isinstance(raised, BadInput) and peak < PEAK_BOUND


def test_a_log_line_over_the_bound_is_refused_before_parsing(refused, tmp_path):
    from hybridplan.engine.logtext import MAX_LINE_CHARS

    err = refused(["logs", "parse", "--engine", "vllm", _log(tmp_path, "x" * (MAX_LINE_CHARS + 1))], "line 1 is",
                  json_at=2)
    assert "over the 2,097,152-character bound for one log line" in err


# ------------------------------------------------------------------------------ properties over the vLLM inputs

@FUZZ
@given(launch=vllm_launches(), gib=st.one_of(st.none(), st.floats(0.01, 200)))
def test_vllm_launches_answer_or_refuse_cleanly(launch, gib):
    from hybridplan.engine.vllm.serving.explain import explain_vllm

    try:
        out = explain_vllm(launch, version=None, kv_memory_gib=gib, gpu="h200")
    except HybridPlanError:
        return
    json.dumps(out, allow_nan=False)  # no NaN or infinity in the answer


@FUZZ
@given(text=mutated_logs())
def test_mutated_vllm_logs_answer_or_refuse_cleanly(text):
    """Boot-log lines with a span replaced by number-like text: parsed, checked and written as JSON, or refused."""
    from hybridplan.engine.api import for_engine
    from hybridplan.engine.requests import LogCheckRequest

    eng = for_engine("vllm")
    for run in (lambda: eng.parse_log(text), lambda: eng.check_log(LogCheckRequest(log=text, gpu="rtx5090"))):
        try:
            json.dumps(run(), allow_nan=False)
        except HybridPlanError:
            pass
