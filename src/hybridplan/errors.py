"""The two ways a request can fail: the user's input is wrong, or the engine would refuse to start."""

from __future__ import annotations

from typing import Any


class HybridPlanError(Exception):
    """Base error; `exit_code` is what the CLI exits with."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadInput(HybridPlanError):
    """The user's input is wrong (unreadable file, unknown flag, bad value). Exit 2."""

    exit_code = 2


class EngineRefusal(HybridPlanError):
    """The engine would not start; carries the engine's own message and the rule that raises it. Exit 3."""

    exit_code = 3

    def __init__(self, message: str, *, rule: str, kind: str = "ValueError") -> None:
        super().__init__(message)
        self.rule = rule
        self.kind = kind

    def as_dict(self) -> dict[str, Any]:
        return {"message": self.message, "rule": self.rule, "type": self.kind}
