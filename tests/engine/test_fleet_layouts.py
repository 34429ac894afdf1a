"""Each engine's fleet layouts (ServingEngine.fleet_layouts / fleet_launch): what it enumerates, how a server is sized
(the planner's capacity, a decode server's one state slot a session, the bytes a session hands over), the commands of
every node, and that a server enumerated with fewer GPUs available is sized the same with more."""

from __future__ import annotations

import math
import shlex

import pytest

from hybridplan.engine.api import for_engine
from hybridplan.engine.requests import ExplainRequest, PlanRequest
from hybridplan.engine.fleet_requests import LEADER_ADDRESS, FleetRequest
from hybridplan.planner.fleet import best_sessions

L = 32768
SMALL = FleetRequest(model="Qwen/Qwen3.5-9B", gpu="h100-80gb", request_length=L, concurrency=64, gpus_available=4)


@pytest.fixture(scope="module")
def sglang_small():
    return {x.name: x for x in for_engine("sglang").fleet_layouts(SMALL)}


@pytest.fixture(scope="module")
def vllm_small():
    return {x.name: x for x in for_engine("vllm").fleet_layouts(SMALL)}


def explain(engine: str, argv: tuple[str, ...], gpu: str = "h100-80gb") -> dict:
    return for_engine(engine).explain(ExplainRequest(command=shlex.join(argv), gpu=gpu))


def test_sglang_enumerates_tp_attention_dp_pp_and_disaggregated_layouts(sglang_small):
    assert list(sglang_small) == [
        "TP1", "TP2", "TP2 attention-DP 2", "TP4", "TP4 attention-DP 4", "TP2 PP2",
        "PD: prefill TP1 + decode TP1", "PD: prefill TP1 + decode TP2", "PD: prefill TP1 + decode TP2 attention-DP 2",
        "PD: prefill TP1 + decode TP4", "PD: prefill TP1 + decode TP4 attention-DP 4", "PD: prefill TP1 + decode TP2 PP2"]
    assert all(x.refusal is None for x in sglang_small.values())


def test_a_server_holds_what_the_planner_serves_at_the_engine_defaults(sglang_small):
    r = sglang_small["TP2"].roles[0]
    answer = for_engine("sglang").plan(PlanRequest(request_length=L, concurrency=r.capacity, gpu="h100-80gb",
                                                   command=shlex.join(r.launch)))
    assert answer["fits"] and answer["search_changes"] == []  # no trade-off knob needed at the capacity
    assert answer["max_total_num_tokens"] >= r.capacity * L  # TP alone: one KV pool holds every session


def test_a_decode_server_holds_one_state_slot_a_session_and_the_aggregated_one_five(sglang_small):
    pd = sglang_small["PD: prefill TP1 + decode TP2"]
    prefill, decode = pd.roles
    assert (prefill.role, prefill.scales, decode.role, decode.scales) == ("prefill", False, "decode", True)
    assert explain("sglang", decode.launch)["slots_per_request"] == 1
    assert explain("sglang", sglang_small["TP2"].roles[0].launch)["slots_per_request"] == 5
    assert decode.capacity > sglang_small["TP2"].roles[0].capacity  # the state pool no longer holds 5 a session


def test_a_session_hands_over_one_state_slot_and_its_kv_on_every_prefill_rank(sglang_small):
    pd = sglang_small["PD: prefill TP1 + decode TP2"]
    d = explain("sglang", pd.roles[0].launch)
    assert pd.handover == {"state_bytes": d["state_bytes_per_slot"], "kv_bytes": d["kv_bytes_per_token"] * L,
                           "total_bytes": d["state_bytes_per_slot"] + d["kv_bytes_per_token"] * L, "ranks": 1}
    assert any("hands" in line and "not modelled" in line for line in pd.limits)


def test_more_gpus_available_keep_every_smaller_server_and_hold_no_fewer_sessions(sglang_small):
    fewer = {x.name: x for x in for_engine("sglang").fleet_layouts(
        FleetRequest(model=SMALL.model, gpu=SMALL.gpu, request_length=L, concurrency=64, gpus_available=2))}
    assert set(fewer) < set(sglang_small)
    for name, lay in fewer.items():
        assert [r.capacity for r in lay.roles] == [r.capacity for r in sglang_small[name].roles], name
    for n in range(1, 8):
        assert best_sessions(list(sglang_small.values()), n + 1) >= best_sessions(list(sglang_small.values()), n)


def test_vllm_replicas_repeat_one_engine_core_and_pp_is_listed_as_not_modelled(vllm_small):
    assert list(vllm_small) == ["TP1", "TP2", "TP4", "TP1 x DP2", "TP1 x DP4", "TP2 x DP2"]
    core = vllm_small["TP2"].roles[0]
    dp = vllm_small["TP2 x DP2"].roles[0]
    assert (dp.capacity, dp.kv_tokens, dp.gpus) == (2 * core.capacity, 2 * core.kv_tokens, 4)
    assert dp.launch[-2:] == ("--data-parallel-size", "2")
    pp = {x.name: x for x in for_engine("vllm").fleet_layouts(FleetRequest(
        model="Qwen/Qwen3.5-397B-A17B", gpu="h200", request_length=L, concurrency=64, gpus_available=16))}
    assert pp["TP8 PP2 (2 nodes)"].refusal.startswith("not modelled: hybridplan's vLLM model has no per-stage KV")


def test_vllm_states_capacity_as_its_pool_logs_it(vllm_small):
    r = vllm_small["TP1"].roles[0]
    d = for_engine("vllm").explain(ExplainRequest(command=shlex.join(r.launch) + f" --max-model-len {L} "
                                                  "--gpu-memory-utilization 0.95", gpu="h100-80gb"))
    assert r.capacity == math.floor(d["max_concurrency"]) and r.kv_tokens == d["kv_cache_tokens"]


def test_vllm_refuses_kimi_k3_by_name_in_one_row():
    (row,) = for_engine("vllm").fleet_layouts(FleetRequest(model="moonshotai/Kimi-K3", gpu="h200", request_length=L,
                                                           concurrency=64))
    assert row.name == "any layout" and "KimiK3ForConditionalGeneration is not modelled" in row.refusal


@pytest.fixture(scope="module")
def kimi_two_nodes():
    req = FleetRequest(model="moonshotai/Kimi-K3", gpu="h200", request_length=L, concurrency=32, gpus_available=16)
    lay = next(x for x in for_engine("sglang").fleet_layouts(req) if x.name == "TP16 (2 nodes)")
    return req, lay


def test_a_server_across_nodes_runs_one_command_a_node_that_differs_only_in_its_rank(kimi_two_nodes):
    req, lay = kimi_two_nodes
    (r,) = lay.roles
    assert (r.gpus, r.nodes) == (16, 2)
    launch = for_engine("sglang").fleet_launch(req, lay, {"server": math.ceil(req.concurrency / r.capacity)})
    (role,) = launch.roles
    a, b = (rank.argv for rank in role.ranks)
    assert role.rank_flag == "--node-rank" and role.gpus_per_node == 8 and role.image == "lmsysorg/sglang:v0.5.23"
    assert a[a.index("--nnodes") + 1] == "2" and a[a.index("--dist-init-addr") + 1] == f"{LEADER_ADDRESS}:20000"
    assert [x for x in a if x not in ("0", "1")] == [x for x in b if x not in ("0", "1")]
    assert (a[a.index("--node-rank") + 1], b[b.index("--node-rank") + 1]) == ("0", "1")
    assert all(rank.serves for rank in role.ranks), [rank.verdict for rank in role.ranks]


def test_vllm_workers_past_the_first_node_run_headless():
    req = FleetRequest(model="Qwen/Qwen3.5-397B-A17B", gpu="h200", request_length=L, concurrency=64,
                       gpus_available=16)
    lay = next(x for x in for_engine("vllm").fleet_layouts(req) if x.name == "TP16 (2 nodes)")
    launch = for_engine("vllm").fleet_launch(req, lay, {"server": 1})
    a, b = (rank.argv for rank in launch.roles[0].ranks)
    assert "--headless" not in a and b[-1] == "--headless"
    assert (a[a.index("--node-rank") + 1], b[b.index("--node-rank") + 1]) == ("0", "1")
    assert a[a.index("--master-addr") + 1] == LEADER_ADDRESS and launch.roles[0].image == "vllm/vllm-openai:v0.33.0"
    assert all(rank.serves for rank in launch.roles[0].ranks), [rank.verdict for rank in launch.roles[0].ranks]
