"""Schemathesis drives every operation of /openapi.json: whatever the schema allows (and what it does not), each
answer is JSON with a status the API documents, never a server error."""

from __future__ import annotations

import json
import logging

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridplan.web.app import create_app
from hybridplan.web.hosts import HostPolicy
from tests.vllm_inputs import LOG_652, mutated_logs, vllm_launches

# schemathesis' in-process client sends Host: testserver
APP = create_app(hosts=HostPolicy(allowed=("testserver",)))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)
DOCUMENTED = {200, 400, 404, 405, 413, 422}  # 405: schemathesis also tries methods an operation lacks


OPERATIONS = {op.label: op for op in (r.ok() for r in schema.get_all_operations())}


# one test id per operation (schemathesis' own parametrize gives every operation the same node id, which pytest-xdist
# then runs once)
@pytest.mark.parametrize("label", sorted(OPERATIONS))
def test_every_operation_answers_json_with_a_documented_status(label):
    @given(case=OPERATIONS[label].as_strategy())
    @settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    def answers(case):
        res = case.call()
        assert res.status_code in DOCUMENTED, (case.method, case.path, case.body, res.text[:300])
        body = json.loads(res.text)
        if res.status_code >= 400:
            assert body["error"]["message"] and "\n" not in body["error"]["message"]

    answers()


# ------------------------------------------------------------------------------ the vLLM request bodies (issue 27)

def _no_constant(token: str) -> object:
    raise AssertionError(f"{token} in a JSON answer")


def _answered_cleanly(res, caplog) -> None:
    """A documented status, JSON without NaN or Infinity, a one-line error, and nothing logged by the server."""
    assert res.status_code in DOCUMENTED - {405}, (res.status_code, res.text[:300])
    body = json.loads(res.text, parse_constant=_no_constant)
    if res.status_code >= 400:
        assert body["error"]["message"] and "\n" not in body["error"]["message"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("hybridplan")], \
        [r.getMessage() for r in caplog.records]


VLLM_BODIES = {
    "/api/explain": st.fixed_dictionaries(
        {"engine": st.just("vllm"), "command": vllm_launches()},
        optional={"kv_memory_gib": st.floats(0.01, 200), "gpu": st.sampled_from(["h200", "rtx5090", "b200"])}),
    "/api/plan": st.fixed_dictionaries(
        {"engine": st.just("vllm"), "command": vllm_launches(), "gpu": st.sampled_from(["h200", "rtx5090"]),
         "request_length": st.integers(1, 1 << 18), "concurrency": st.integers(1, 64)},
        optional={"kv_memory_gib": st.floats(0.01, 200), "max_util": st.floats(0.01, 1.0)}),
    "/api/logs/check": st.fixed_dictionaries(
        {"engine": st.just("vllm"), "log": mutated_logs()},
        optional={"command": vllm_launches(), "gpu": st.sampled_from(["h200", "rtx5090"])}),
    "/api/logs/parse": st.fixed_dictionaries({"engine": st.just("vllm"), "log": mutated_logs()}),
}


@pytest.mark.parametrize("path", sorted(VLLM_BODIES))
def test_vllm_bodies_answer_cleanly_and_log_nothing(path, caplog):
    """Hostile vLLM launches (the release's flags, -O and dotted spellings, number-like and JSON values with NaN)
    and mutated boot logs: a documented status, JSON with no NaN, one-line errors, no server-log entry."""
    from fastapi.testclient import TestClient

    client = TestClient(APP)

    @given(body=VLLM_BODIES[path])
    @settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    def answers(body):
        caplog.clear()
        _answered_cleanly(client.post(path, json=body), caplog)

    with caplog.at_level(logging.WARNING):
        answers()


def test_a_two_megabyte_log_of_open_markers_answers_and_the_server_keeps_answering(caplog):
    """issue 27: a 1.9 MB body of `non-default args: {` froze the server (the pattern was quadratic)."""
    from fastapi.testclient import TestClient

    client = TestClient(APP)
    log = "non-default args: {" * 100_000 + "\n" + LOG_652
    with caplog.at_level(logging.WARNING):
        res = client.post("/api/logs/check", json={"engine": "vllm", "log": log, "gpu": "rtx5090"})
        _answered_cleanly(res, caplog)
    assert res.status_code == 200 and res.json()["available_kv_gib"] == 6.01
    assert client.get("/").status_code == 200
