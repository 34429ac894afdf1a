"""A fleet layout's per-rank sizing equals sglang 0.5.23's own code: each server the fleet sizes (TP, attention DP,
PP, a PD decode and a PD prefill server) is run through the engine in the oracle venv with the launch the planner
gives it (mem fraction and state split included) and the memory profile its timeline predicts on the card; the
engine's state slots, KV tokens and request cap are the fleet's, and every resolved field equals hybridplan's."""

from __future__ import annotations

from pathlib import Path

import pytest
from oracle_setup import oracle_python

from hybridplan.conformance.compare import compare
from hybridplan.conformance.runner import run_oracle
from hybridplan.conformance.sglang.fixtures import materialize
from hybridplan.conformance.sglang.model_side import predict
from hybridplan.conformance.sglang.oracle import ORACLE
from hybridplan.conformance.sglang.scenarios import Scenario
from hybridplan.engine.fleet_requests import FleetRequest
from hybridplan.engine.sglang.serving.fleet_shapes import Shape, Sized, size
from hybridplan.hardware.catalog import lookup

pytestmark = pytest.mark.conformance
MODEL, GPU, L = "Qwen/Qwen3.5-397B-A17B", "h200", 32768
# PD checks and defaults beside the fleet's servers: the transfer backend a role refuses, the decode extra slots
PD_CASES = {"PD prefill fake": ("--tp", "8", "--disaggregation-mode", "prefill", "--disaggregation-transfer-backend", "fake"),
            "PD decode fake radix": ("--tp", "8", "--disaggregation-mode", "decode", "--disaggregation-transfer-backend",
                                     "fake", "--disaggregation-decode-enable-radix-cache"),
            "PD decode small cap": ("--tp", "8", "--disaggregation-mode", "decode", "--max-running-requests", "16")}
SHAPES = {"TP8": Shape(tp=8), "TP8 attention-DP 8": Shape(tp=8, attn_dp=8), "TP4 PP2": Shape(tp=4, pp=2),
          "PD decode TP8": Shape(tp=8, mode="decode"), "PD decode TP4 PP2": Shape(tp=4, pp=2, mode="decode"),
          "PD prefill TP8": Shape(tp=8, mode="prefill"), "TP16 (2 nodes)": Shape(tp=16, nodes=2)}


@pytest.fixture(scope="module")
def sized() -> dict[str, Sized]:
    req = FleetRequest(model=MODEL, gpu=GPU, request_length=L, concurrency=64)
    return {name: size(shape, req, lookup(GPU), "0.5.23") for name, shape in SHAPES.items()}


@pytest.fixture(scope="module")
def engine_side(sized, tmp_path_factory):
    """The fleet's servers run live in the oracle interpreter (HYBRIDPLAN_ORACLE_PYTHON; skipped without it, failed
    under CI)."""
    python = oracle_python()
    path = materialize(Path(tmp_path_factory.mktemp("fleet-models")))[MODEL].path
    scenarios = []
    for name, s in sized.items():
        assert s.outcome is not None and s.outcome.timeline is not None, name
        argv = list(s.outcome.argv)
        argv[argv.index("--model-path") + 1] = path
        tl = s.outcome.timeline
        scenarios.append(Scenario(id=name, model=MODEL, argv=tuple(argv), available_gib=tl.available_gib.value,
                                  pre_load_gib=tl.pre_load_gib.value, gpu_mib=lookup(GPU).memory_mib))
    for name, flags in PD_CASES.items():
        scenarios.append(Scenario(id=name, model=MODEL, argv=("--model-path", path, *flags), available_gib=40.0,
                                  pre_load_gib=137.0, gpu_mib=lookup(GPU).memory_mib))
    header, results = run_oracle(ORACLE, python, [sc.payload() for sc in scenarios])
    assert header["version"] == "0.5.23"
    return scenarios, results


def test_every_fleet_server_resolves_and_sizes_as_the_engine_does(engine_side):
    scenarios, results = engine_side
    assert results["PD prefill fake"]["error"]["type"] == "AssertionError"  # the refusals are compared too
    assert results["PD decode fake radix"]["error"]["type"] == "ValueError"
    drifts = [f"{sc.id} {d.field}: engine {d.engine!r} != hybridplan {d.hybridplan!r} ({d.rule})"
              for sc in scenarios for d in compare(results[sc.id], predict(sc), ORACLE.comparison)]
    assert not drifts, "\n".join(drifts)


def test_the_fleet_pools_per_rank_are_the_engine_pools(engine_side, sized):
    _, results = engine_side
    for name, s in sized.items():
        got = results[name]
        assert "error" not in got, (name, got.get("error"))
        dp = s.shape.attn_dp
        assert got["sizing"]["K"] * dp == s.state_slots, name
        assert got["sizing"]["max_total_num_tokens"] * dp == s.kv_tokens, name
        assert got["sizing"]["max_running_requests"] * dp >= s.capacity, name  # the cap admits every session
        assert got["resolved"]["disable_radix_cache"] is (s.shape.mode == "decode"), name
