"""`--gpu-memory-gib` alone plans and explains on a generic CUDA card (as its help says), in the CLI and the web API:
the card's memory is the number given, the driver reserve the catalog's fallback, and no page's records apply."""

from __future__ import annotations

import pytest

from hybridplan.hardware.catalog import lookup

PLAN = ["plan", "--json", "--model", "Qwen/Qwen3.8-27B", "-L", "4096", "-C", "4", "--gpu-memory-gib"]
GIB_MIB = 1024


def _reserve_gib() -> float:
    """A card with no observed torch total keeps the RTX 5090's driver reserve (data/gpus.yaml)."""
    ref = lookup("rtx5090")
    return (ref.memory_mib - ref.torch_total_mib) / GIB_MIB


def test_plan_on_a_generic_card(cli_json):
    code, d = cli_json(*PLAN, "80")
    assert code == 0 and d["fits"], d.get("why")
    assert d["target"]["gpu"]["id"] == "custom" and d["target"]["gpu"]["memory_mib"] == 80 * GIB_MIB
    b = d["breakdown"]
    assert b["capacity_gib"] == 80.0 and b["driver_reserved_gib"] == pytest.approx(_reserve_gib())
    parts = [v for k, v in b.items() if k.endswith("_gib") and k != "capacity_gib"]
    assert sum(parts) == pytest.approx(80.0)
    # the command it prints, explained on the same generic card, sizes the same pools
    code, e = cli_json("explain", "--json", "--gpu-memory-gib", "80", "--", *d["argv"])
    assert code == 0 and e["max_running_requests"] == d["max_running_requests"]
    assert e["max_total_num_tokens"] == d["max_total_num_tokens"] and e["max_mamba_cache_size"] == d["max_mamba_cache_size"]
    assert e["memory"]["timeline"]["capacity_gib"]["value"] == 80.0


def test_plan_on_a_small_generic_card_says_why(cli_json):
    from hybridplan.engine.sglang.serving.constants import constants_for

    code, d = cli_json(*PLAN, "40")
    free = 40 - _reserve_gib() - constants_for("custom").context_gib_single  # one GPU: no NCCL
    assert code == 1 and not d["fits"]
    assert f"exceed the {free:.2f} GiB free before loading" in d["why"]
    assert any(c["change"].startswith("a larger card: h100-80gb") for c in d["changes_that_fit"])


@pytest.fixture(scope="module")
def client():
    from fastapi.testclient import TestClient

    from hybridplan.web.app import create_app
    from hybridplan.web.hosts import HostPolicy

    app = create_app(hosts=HostPolicy(host="127.0.0.1", port=8000))
    with TestClient(app, base_url="http://127.0.0.1:8000", raise_server_exceptions=False) as c:
        yield c


def test_api_plan_and_explain_on_a_generic_card(client, cli_json):
    body = {"model": "Qwen/Qwen3.8-27B", "request_length": 4096, "concurrency": 4, "gpu_memory_gib": 80}
    res = client.post("/api/plan", json=body)
    _, expected = cli_json(*PLAN, "80")
    assert res.status_code == 200 and res.json() == expected
    assert res.json()["max_running_requests"] == expected["max_running_requests"] > 0
    res = client.post("/api/explain", json={"command": expected["command"], "gpu_memory_gib": 80})
    _, explained = cli_json("explain", "--json", "--gpu-memory-gib", "80", "--", expected["command"])
    assert res.status_code == 200 and res.json() == explained
    assert explained["memory"]["timeline"]["gpu"] == "custom"
