"""Why a boot (or a run) failed, by phase: the engine's own messages first, else how far the boot had got.

Phases, in boot order: `startup` (argument checks, before any weight), `weights` (loading; an OOM here means the
weights do not fit), `state_pool` (sizing or allocating the mamba state pool), `kv_pool` (the KV pool),
`cuda_graph` (graph capture, including torch's `num_active_captures_ > 0` assert after an OOM inside a capture),
`first_request` (the warmup request or the first benchmark request), `killed` (SIGKILL / the OOM killer).
A measured run adds `timeout` (no /health in time) and `bench` (the server stayed up but the benchmark failed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TYPE_CHECKING

if TYPE_CHECKING:
    from hybridplan.engine.sglang.log_records import Record

PHASES = ("startup", "weights", "state_pool", "kv_pool", "cuda_graph", "first_request", "killed", "timeout", "bench")


class Milestone(IntEnum):
    """How far a boot got, from the lines it logged."""

    START = 0
    LOADING = 1  # Load weight begin
    LOADED = 2  # Load weight end (every runner)
    POOLS = 3  # the state or KV pool is allocated
    POOLS_DONE = 4  # Memory pool end
    CAPTURING = 5  # Capture ... graph begin
    CAPTURED = 6  # Capture ... graph end
    SERVING = 7  # the scheduler's max_total_num_tokens summary; the warmup request follows
    READY = 8  # The server is fired up and ready to roll


# where a failure without an engine message of its own happened
_PHASE_AT = {
    Milestone.START: "startup", Milestone.LOADING: "weights", Milestone.LOADED: "state_pool",
    Milestone.POOLS: "kv_pool", Milestone.POOLS_DONE: "cuda_graph", Milestone.CAPTURING: "cuda_graph",
    Milestone.CAPTURED: "first_request", Milestone.SERVING: "first_request", Milestone.READY: "first_request",
}

# the engine's own messages (reference/engine-semantics.md section 8), checked before anything generic: literal
# needles, or patterns with bounded repeats only (the text can be anything a user pastes)
_ENGINE_MESSAGES: tuple[tuple[str, str | re.Pattern[str]], ...] = (
    # kv_cache_configurator.py::_handle_max_mamba_cache / resolve_max_num_reqs
    ("state_pool", "Not enough GPU memory for hybrid (mamba/linear-attention) state cache"),
    ("state_pool", "state cache is too small to serve any requests"),
    # kv_cache_configurator.py::_profile_available_bytes; pool_configurator.py::MemoryPoolConfig.__post_init__
    ("kv_pool", "Loaded weights leave no GPU memory for the KV cache"),
    ("kv_pool", "Not enough memory. Please try to increase --mem-fraction-static"),
    # managers/tp_worker.py after alloc_memory_pool
    ("kv_pool", "Memory pool size is too small"),
    ("kv_pool", "max_running_request is zero"),
    # torch's CUDA-graph assert after an OOM inside a capture; the runners' capture wrappers
    ("cuda_graph", "num_active_captures_ > 0 INTERNAL ASSERT FAILED"),
    ("cuda_graph", re.compile(r"Capture [A-Za-z ]{0,40}graph failed", re.IGNORECASE)),
)
# the words of the messages (their full text, placeholders left out), for re-joining one a terminal cut inside a word
ENGINE_MESSAGE_WORDS = " ".join([n if isinstance(n, str) else n.pattern for _, n in _ENGINE_MESSAGES] + [
    "Computed max_mamba_cache_size= (total_rest_memory= GB, mamba_cache_per_req= MB). Try: (1) reduce "
    "--max-running-requests, (2) increase --mem-fraction-static, (3) reduce --speculative-num-draft-tokens, or (4) "
    "use GPUs with more memory.", "Hybrid max_mamba_cache_size=, mamba_ratio=, resulting max_num_reqs=.",
    "under --mem-fraction-static=. Raise above (minimum viable = 1 - available/pre = ). If using speculative "
    "decoding, draft weights are now counted.", "Current value: mem_fraction_static=",
    "at \"/pytorch/c10/cuda/CUDACachingAllocator.cpp\": please report a bug to PyTorch.", "RuntimeError ValueError AssertionError torch.OutOfMemoryError"])

# the numbers in the state-pool refusals (kv_cache_configurator.py::_handle_max_mamba_cache, resolve_max_num_reqs)
STATE_REFUSAL = re.compile(r"Computed max_mamba_cache_size=(-?\d{1,12}) \(total_rest_memory=(-?\d{1,9}(?:\.\d{1,9})?) "
                           r"GB, mamba_cache_per_req=(\d{1,9}(?:\.\d{1,9})?) MB\)")
TOO_SMALL = re.compile(r"max_mamba_cache_size=(-?\d{1,12}), mamba_ratio=(\d{1,4}), resulting max_num_reqs=(-?\d{1,9})")
_OOM_WORDS = ("outofmemoryerror", "out of memory")  # matched on the lower-cased text
_EXCEPTION = re.compile(r"(?:\[rank\d{1,5}\]:\s{0,8})?[A-Za-z_][\w.]{0,127}(?:Error|Exception)\b")
_KILLED = re.compile(r"^Killed\b|\bSIGKILL\b|exit(?:code| code|=)\s{0,4}(?:-9|137)\b"
                     r"|killed by (?:the )?(?:OOM|earlyoom)", re.IGNORECASE)


def _find(needle: str | re.Pattern[str], text: str) -> int:
    """Where the needle starts in text (-1 when absent)."""
    if isinstance(needle, str):
        return text.find(needle)
    m = needle.search(text)
    return -1 if m is None else m.start()


@dataclass(frozen=True, kw_only=True)
class Failure:
    """Where and why a boot or run failed; `message` is the log's own text of the root error, `chained` the
    exception raised while handling it (torch's capture assert after a CUDA OOM), when the log shows one."""

    phase: str
    message: str
    chained: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"phase": self.phase, "message": self.message} | ({"chained": self.chained} if self.chained else {})


def phase_at(milestone: Milestone) -> str:
    """The phase a boot was in once it had logged `milestone`."""
    return _PHASE_AT[milestone]


def classify(records: list["Record"], marks: list[Milestone]) -> Failure | None:
    """The failure in one rank's records: the first fatal line, i.e. one after which the boot got no further.

    `marks[i]` is the milestone reached once record i was logged. An engine message names its phase; an OOM or
    any other exception takes the phase the boot was in; `Killed` and friends say `killed`.
    """
    final = marks[-1] if marks else Milestone.START
    candidates = [(i, r) for i, r in enumerate(records) if marks[i] == final]
    first = candidates[0][0] if candidates else 0
    for phase, needle in _ENGINE_MESSAGES:
        for i, rec in candidates:
            if (start := _find(needle, rec.text)) >= 0:
                return _rooted(records, first, i, phase, _message(rec.text, start))
    for i, rec in candidates:
        if any(w in rec.text.lower() for w in _OOM_WORDS) and _EXCEPTION.match(rec.text):
            return _rooted(records, first, i, phase_at(final), rec.text)
    for i, rec in candidates:
        if _EXCEPTION.match(rec.text):
            return _rooted(records, first, i, phase_at(final), rec.text)
    for _, rec in candidates:
        if _KILLED.search(rec.text):
            return Failure(phase="killed", message=rec.text)
    return None


# Python's words between a root exception's traceback and the one raised while handling it (or from it)
_CHAINED = ("During handling of the above exception, another exception occurred",
            "The above exception was the direct cause of the following exception")


def _rooted(records: list["Record"], first: int, at: int, phase: str, message: str) -> Failure:
    """The failure named by its root error: from the exception at `at`, back through each chain separator to the
    exception printed before it (records from `first` on; another exception before a separator ends the chain; a
    root whose record runs on into the separator, as an unwrapped paste joins them, is cut there). One backward
    pass: every record is looked at once."""
    root, k = None, at - 1
    while k >= first:
        text = records[k].text
        sep = next((c for c in _CHAINED if c in text), None)
        if sep is None:
            if _EXCEPTION.match(text):
                break  # an exception of its own, not chained to this one
            k -= 1
            continue
        head = text[:text.find(sep)].strip()
        j = k if _EXCEPTION.match(head) else next(
            (j for j in range(k - 1, first - 1, -1) if _EXCEPTION.match(records[j].text)), None)
        if j is None:
            break
        root = head if j == k else records[j].text
        k = j - 1
    if root is None:
        return Failure(phase=phase, message=message)
    return Failure(phase=phase, message=root, chained=message)


def _message(text: str, start: int) -> str:
    """The log text from the exception that carries the engine message at `start` (drops a logger preamble)."""
    head = _EXCEPTION_IN.search(text[:start] + " ")
    return text[head.start():].strip() if head else text[start:].strip()


_EXCEPTION_IN = re.compile(r"[A-Za-z_][\w.]{0,127}(?:Error|Exception)\b: ")
