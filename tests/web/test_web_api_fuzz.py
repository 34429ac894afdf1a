"""Schemathesis drives every operation of /openapi.json: whatever the schema allows (and what it does not), each
answer is JSON with a status the API documents, never a server error."""

from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from hybridplan.web.app import create_app
from hybridplan.web.hosts import HostPolicy

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
