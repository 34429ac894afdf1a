"""Why a vLLM boot failed, named by its root error: a CUDA out-of-memory or vLLM's own refusal (`ValueError:
max_num_seqs (1024) exceeds available Mamba cache blocks (969)`), not the exception that carried it out of the
engine process (`RuntimeError: Engine core initialization failed. See root cause above`, v1/engine/utils.py::
wait_for_engine_startup; `Worker failed with error '...', please check the stack trace above for the root cause`,
v1/executor/multiproc_executor.py) or was raised while handling it.

Each line is read once with bounded patterns: a process tag and a logger prefix (`(EngineCore_DP0 pid=107) ERROR
08-22 04:42:13 [core.py:708] `) may precede the exception's `Type: message`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_PREFIX = re.compile(r"(?:\([A-Za-z_][\w.-]{0,63} pid=\d{1,10}\) )?(?:(?:ERROR|WARNING|CRITICAL|INFO|DEBUG) "
                     r"\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})? \[[^\]\s]{1,128}\] )?")
_RAISED = re.compile(r"((?:[A-Za-z_]\w{0,63}\.){0,8}[A-Za-z_]\w{0,63}(?:Error|Exception)): ([^\n]{1,2000})")
_CARRIERS = ("See root cause above", "check the stack trace above for the root cause")  # vLLM's wrappers
_OOM = ("OutOfMemoryError", "CUDA out of memory")


@dataclass(frozen=True, kw_only=True)
class Failure:
    """The root error (its type and message as logged) and what carried it (`Type: message`, in log order)."""

    type: str
    message: str
    chained: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message, "chained": list(self.chained)}


def _raised(text: str) -> list[tuple[str, str]]:
    """Every `Type: message` line (the last line of a traceback), in log order."""
    out = []
    for line in text.splitlines():
        prefix = _PREFIX.match(line)
        m = _RAISED.match(line, prefix.end() if prefix else 0)
        if m is not None:
            out.append((m.group(1), m.group(2).strip()))
    return out


def failure(text: str) -> Failure | None:
    """The log's root error: a CUDA out-of-memory first, else the last exception that is not one of vLLM's carriers
    (the fatal one; a carrier alone when the log holds nothing else); None when the log shows no exception."""
    raised = _raised(text)
    if not raised:
        return None
    own = [r for r in raised if not any(c in r[1] for c in _CARRIERS)]
    oom = [r for r in own if any(w in f"{r[0]}: {r[1]}" for w in _OOM)]
    root = oom[0] if oom else own[-1] if own else raised[-1]
    after = raised[raised.index(root) + 1:]
    return Failure(type=root[0], message=root[1], chained=tuple(f"{t}: {m}" for t, m in after if (t, m) != root))
