"""The fleet ranking (planner/fleet.py): servers per role for C sessions, the GPUs they take, feasibility within the GPUs
available, the order (GPUs, then headroom), and that more GPUs never hold fewer sessions."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from hybridplan.engine.fleet_requests import FleetLayout, FleetRequest, FleetRole
from hybridplan.planner.fleet import best_sessions, ranked, row, scale, within


def role(kind: str = "server", *, capacity: int, gpus: int, scales: bool = True, count: int = 1) -> FleetRole:
    return FleetRole(role=kind, scales=scales, count=count, gpus=gpus, nodes=max(1, gpus // 8), parallel=f"TP{gpus}",
                     capacity=capacity, kv_tokens=capacity * 1000, state_slots=capacity, binding="KV", why="",
                     launch=("serve",))


def layout(name: str, *roles: FleetRole, refusal: str | None = None) -> FleetLayout:
    return FleetLayout(engine="e", version="1", name=name, roles=roles, refusal=refusal)


def req(C: int, available: int | None = None) -> FleetRequest:
    return FleetRequest(model="m", gpu="g", request_length=1024, concurrency=C, gpus_available=available)


def test_a_scaling_role_runs_ceil_c_over_capacity_servers_and_a_fixed_role_its_count():
    pd = layout("pd", role("prefill", capacity=3, gpus=4, scales=False), role("decode", capacity=40, gpus=8))
    assert scale(pd, 100) == {"prefill": 1, "decode": 3}
    r = row(pd, req(100))
    assert (r.gpus, r.sessions, r.feasible) == (4 + 24, 120, True)
    assert round(r.headroom(100), 2) == 0.2


def test_a_layout_beyond_the_gpus_available_says_how_many_sessions_fit_on_them():
    big = layout("tp8", role(capacity=50, gpus=8))
    r = row(big, req(200, available=20))
    assert (r.gpus, r.feasible) == (32, False)
    assert r.why == "needs 32 GPUs, 20 available: 100 sessions fit on them"
    assert within(big, 20) == 100 and within(big, 7) == 0


def test_fixed_roles_take_their_gpus_before_any_scaling_server():
    pd = layout("pd", role("prefill", capacity=1, gpus=4, scales=False, count=2), role("decode", capacity=10, gpus=2))
    assert within(pd, 7) == 0  # the two prefill servers alone take 8
    assert within(pd, 12) == 20


def test_rows_rank_feasible_first_then_fewest_gpus_then_headroom_and_refusals_last():
    rows = ranked([layout("refused", refusal="the engine refuses"),
                   layout("tp2", role(capacity=10, gpus=2)),  # 10 servers, 20 GPUs
                   layout("tp4", role(capacity=30, gpus=4)),  # 4 servers, 16 GPUs, 120 sessions
                   layout("tp4-dp", role(capacity=26, gpus=4)),  # 4 servers, 16 GPUs, 104 sessions
                   layout("tp8", role(capacity=40, gpus=8))],  # 3 servers, 24 GPUs
                  req(100, available=16))
    assert [r.layout.name for r in rows] == ["tp4", "tp4-dp", "tp2", "tp8", "refused"]
    assert [r.feasible for r in rows] == [True, True, False, False, False]


GPUS = st.sampled_from([1, 2, 4, 8, 16, 32])
# a layout as the engines build them: one role that scales with the sessions, and up to two fixed ones
scaling = st.builds(lambda cap, gpus: role("decode", capacity=cap, gpus=gpus), st.integers(0, 500), GPUS)
fixed = st.lists(st.builds(lambda cap, gpus, count: (cap, gpus, count), st.integers(0, 50), GPUS, st.integers(1, 3)),
                 max_size=2)
layouts_ = st.lists(st.builds(
    lambda main, others, refused: layout("x", *(role(f"fixed{i}", capacity=c, gpus=g, scales=False, count=n)
                                                for i, (c, g, n) in enumerate(others)), main,
                                         refusal="no" if refused else None),
    scaling, fixed, st.booleans()), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(layouts_, st.integers(0, 256), st.integers(0, 256))
def test_more_gpus_never_hold_fewer_sessions(layouts, n, more):
    assert best_sessions(layouts, n + more) >= best_sessions(layouts, n)
    for lay in layouts:
        assert within(lay, n + more) >= within(lay, n)


@settings(max_examples=200, deadline=None)
@given(layouts_, st.integers(1, 2000), st.integers(1, 256))
def test_a_feasible_row_holds_the_sessions_on_the_gpus_it_names(layouts, C, available):
    for r in ranked(layouts, req(C, available)):
        if r.feasible:
            assert r.gpus <= available and r.sessions >= C
            assert within(r.layout, r.gpus) >= C
