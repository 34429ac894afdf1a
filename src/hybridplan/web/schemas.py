"""Request bodies of the JSON API: every field bounded, so no request can ask for unbounded work."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_COMMAND_CHARS = 16_384
MAX_LOG_CHARS = 2_000_000
MAX_BUDGET_GIB = 1e5  # far above any card; the engine model takes negative budgets (it refuses them itself)
VERSION_PATTERN = r"^[0-9A-Za-z._-]{1,32}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ExplainRequest(_Strict):
    """`hybridplan explain --json [--pool-budget-gib X] [--engine-version V] -- <command>`."""

    command: str = Field(min_length=1, max_length=MAX_COMMAND_CHARS,
                         description="The launch command as typed (env assignments, program, flags); "
                                     "backslash-newline continuations are joined.",
                         examples=["python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B "
                                   "--mem-fraction-static 0.85"])
    pool_budget_gib: float | None = Field(None, ge=-MAX_BUDGET_GIB, le=MAX_BUDGET_GIB,
                                          description="The engine's total_rest_memory in GiB (--pool-budget-gib).")
    engine_version: str | None = Field(None, pattern=VERSION_PATTERN, description="Engine version to model.")


class LogParseRequest(_Strict):
    """`hybridplan logs parse --json <log>`."""

    log: str = Field(min_length=1, max_length=MAX_LOG_CHARS, description="The server's boot log text.")


class LogCheckRequest(LogParseRequest):
    """`hybridplan logs check --json <log> [--log-version V] [--engine-version V] -- <command>`."""

    command: str = Field(min_length=1, max_length=MAX_COMMAND_CHARS, description="The command the server ran.")
    log_version: str | None = Field(None, max_length=120, description="The sglang build that wrote the log.")
    engine_version: str | None = Field(None, pattern=VERSION_PATTERN, description="Engine version to model.")
