"""`fleet` answers the hybrids it was built for, on both engines: Qwen3.5-397B-A17B, Nemotron 3 Ultra (FP8, NVFP4) and
Kimi K3 on H200/B200 nodes, Qwen3.8-27B on RTX 5090s. Each engine's best layout is launched and every command of
every node is one the engine's verdict says serves; where an engine cannot run the model its row says why."""

from __future__ import annotations

import pytest

from hybridplan.calibration.sources import all_evidence
from hybridplan.engine.api import engines, for_engine
from hybridplan.engine.fleet_requests import FleetRequest
from hybridplan.planner.fleet import ranked

CASES = [("Qwen/Qwen3.5-397B-A17B", "h200"), ("Qwen/Qwen3.5-397B-A17B", "b200"),
         ("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8", "h200"), ("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8", "b200"),
         ("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-NVFP4", "b200"), ("moonshotai/Kimi-K3", "h200"),
         ("moonshotai/Kimi-K3", "b200"), ("Qwen/Qwen3.8-27B", "rtx5090")]
REFUSED = {("vllm", "moonshotai/Kimi-K3"): "KimiK3ForConditionalGeneration is not modelled"}


@pytest.mark.parametrize("engine", engines())
@pytest.mark.parametrize("model, gpu", CASES, ids=[f"{m.rpartition('/')[2]}-{g}" for m, g in CASES])
def test_fleet_answers_with_commands_the_verdict_says_serve(model, gpu, engine):
    req = FleetRequest(model=model, gpu=gpu, request_length=32768, concurrency=64, evidence=all_evidence)
    e = for_engine(engine)
    rows = ranked(e.fleet_layouts(req), req)
    if (engine, model) in REFUSED:
        assert [r.layout.name for r in rows] == ["any layout"] and REFUSED[engine, model] in (rows[0].why or "")
        return
    best = rows[0]
    assert best.feasible and best.sessions >= 64
    launch = e.fleet_launch(req, best.layout, best.servers)
    ranks = [rank for role in launch.roles for rank in role.ranks if rank.serves is not None]
    assert len(ranks) == sum(r.nodes for r in best.layout.roles)  # a command for every node of every role
    assert all(rank.serves for rank in ranks), [rank.verdict for rank in ranks]
