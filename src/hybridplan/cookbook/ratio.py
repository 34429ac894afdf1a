"""The calculator's balanced `--mamba-full-memory-ratio` for a composed command and the page's workload.

The number comes from the planner (hybridplan.engine.sglang.serving.ratio.balanced_ratio); this module only adapts it to the
renderer: a frozen result with the docs' display string, memoised per command.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from hybridplan.engine.api import LaunchCommand
from hybridplan.errors import HybridPlanError


@dataclass(frozen=True)
class RatioResult:
    """The calculator's answer for one command: the ratio as pinned (`text`), the pin alternative, and why not.

    `text` is the engine's balance point, with the draft KV the engine folds into the KV cell; `docs_text` is what
    the docs calculators show (target KV only, cookbook-semantics §7.19), kept for comparison.
    """

    text: str | None
    docs_text: str | None
    value: float | None
    pin: int | None  # --max-mamba-cache-size alternative (C x S, per the planner)
    slots_per_request: int | None
    draft_states_per_request: int | None
    error: str | None = None
    detail: dict[str, Any] = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {"mamba_full_memory_ratio": self.value, "text": self.text, "docs_calculator_text": self.docs_text,
                "max_mamba_cache_size_pin": self.pin,
                "slots_per_request": self.slots_per_request,
                "draft_states_per_request": self.draft_states_per_request,
                "state_bytes_per_slot": self.detail.get("state_bytes_per_slot"),
                "kv_bytes_per_token": self.detail.get("kv_bytes_per_token"),
                "kv_bytes_per_token_target": self.detail.get("kv_bytes_per_token_target"),
                "request_length": self.detail.get("request_length"), "concurrency": self.detail.get("concurrency"),
                "formula": self.detail.get("formula", {}).get("text"), "error": self.error}


@lru_cache(maxsize=4096)
def balanced(command: LaunchCommand, request_length: int, concurrency: int, version: str) -> RatioResult:
    """The planner's balanced ratio for this command, without a pool budget like the docs calculator (the value
    depends on the command and the workload only); errors become a result with `error`."""
    from hybridplan.engine.api import balanced_ratio

    try:
        out = balanced_ratio(command, request_length=request_length, concurrency=concurrency, version=version)
    except HybridPlanError as exc:
        return RatioResult(text=None, docs_text=None, value=None, pin=None, slots_per_request=None, draft_states_per_request=None,
                           error=exc.message)
    return RatioResult(text=out.get("mamba_full_memory_ratio_text"), docs_text=out.get("docs_calculator_ratio_text"),
                       value=out.get("mamba_full_memory_ratio"),
                       pin=out.get("max_mamba_cache_size_pin"), slots_per_request=out.get("slots_per_request"),
                       draft_states_per_request=out.get("draft_states_per_request"), detail=out)
