"""The JSON API: each endpoint calls the function its CLI command calls and returns the same dict as `--json`."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from hybridplan.web.errors import STATUS_FOR_EXIT
from hybridplan.web.schemas import ExplainRequest, LogCheckRequest, LogParseRequest

ERROR_SCHEMA = {"type": "object", "properties": {"error": {"type": "object", "properties": {
    "message": {"type": "string"}, "type": {"type": "string"}, "rule": {"type": "string"}}}}}
ERRORS = {
    400: {"description": "Bad input (the CLI's exit 2): one-line message under `error`.",
          "content": {"application/json": {"schema": ERROR_SCHEMA}}},
    422: {"description": "The engine would refuse to start (the CLI's exit 3): the engine's message and rule under "
                         "`error`; where the CLI still prints a payload, the body is that payload."},
    413: {"description": "Request body too large."},
}

router = APIRouter(prefix="/api", tags=["api"])


class CliJSON(JSONResponse):
    """JSON encoded exactly as the CLI's `emit_json` encodes it (non-JSON values as strings)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, default=str).encode()


def payload(result: dict) -> CliJSON:
    """A CLI payload; one carrying an engine refusal gets the refusal's status, as the CLI exits 3."""
    return CliJSON(result, status_code=STATUS_FOR_EXIT[3] if "error" in result else 200)


@router.post("/explain", responses=ERRORS, summary="hybridplan explain --json")
def explain(req: ExplainRequest) -> CliJSON:
    """What the engine will allocate for a launch command, and why (the `explain --json` object)."""
    from hybridplan.engine.command import parse_command
    from hybridplan.explain import explain as run

    return payload(run(parse_command(req.command), budget=req.pool_budget_gib, version=req.engine_version))


@router.post("/logs/parse", responses=ERRORS, summary="hybridplan logs parse --json")
def logs_parse(req: LogParseRequest) -> CliJSON:
    """Pools, weights, graphs, caps and the failure phase read off a boot log (the `logs parse --json` object)."""
    from hybridplan.verify.logparse import parse_log

    return CliJSON(parse_log(req.log).as_dict())


@router.post("/logs/check", responses=ERRORS, summary="hybridplan logs check --json")
def logs_check(req: LogCheckRequest) -> CliJSON:
    """Predicted vs observed for a boot log and the command that wrote it (the `logs check --json` object);
    `explained: false` is the CLI's exit 1 (findings), still a 200 answer."""
    from hybridplan.engine.command import parse_command
    from hybridplan.verify.check import check_log
    from hybridplan.verify.logparse import parse_log

    return CliJSON(check_log(parse_log(req.log), parse_command(req.command), log_version=req.log_version,
                             version=req.engine_version))
