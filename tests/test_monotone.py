"""monotone.largest_true: the engine's max_model_len fit and the planner's largest L / C share one search."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hybridplan.monotone import largest_true


@given(lo=st.integers(-50, 50), span=st.integers(0, 500), edge=st.integers(-100, 600))
def test_it_is_the_last_n_below_the_edge(lo, span, edge):
    hi = lo + span
    calls: list[int] = []

    def holds(n: int) -> bool:
        calls.append(n)
        return n <= edge

    got = largest_true(lo, hi, holds)
    assert got == (min(edge, hi) if edge >= lo else lo - 1)
    assert all(lo <= n <= hi for n in calls) and len(calls) <= span.bit_length() + 1  # a bisection, not a scan
