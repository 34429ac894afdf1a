"""Search over a monotone predicate, shared by the engine models (vLLM's max_model_len fit) and the planner (the
largest length or concurrency that fits)."""

from __future__ import annotations

from typing import Callable


def largest_true(lo: int, hi: int, holds: Callable[[int], bool]) -> int:
    """The largest n in [lo, hi] with holds(n), for a predicate true up to some n and false after; lo - 1 when none."""
    best = lo - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if holds(mid):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best
