"""Manifests rendered from a typed fleet launch (planner/manifest.py): every Kubernetes object well formed, a server
across nodes a LeaderWorkerSet whose pods take the controller's leader address and worker index, and a compose file
only where one host holds the fleet."""

from __future__ import annotations

import pytest
import yaml

from hybridplan.engine.fleet_requests import LEADER_ADDRESS, FleetLaunch, RankLaunch, RoleLaunch
from hybridplan.planner.manifest import app_name, compose, kubernetes

SERVE = ("python", "-m", "engine", "--model-path", "Org/Model")


def ranks(nodes: int) -> tuple[RankLaunch, ...]:
    return tuple(RankLaunch(node_rank=i, argv=SERVE + ("--nnodes", str(nodes), "--node-rank", str(i), "--dist-init-addr",
                                                       f"{LEADER_ADDRESS}:20000"), env=(("NCCL_DEBUG", "WARN"),),
                            serves=True, verdict="serves") for i in range(nodes))


def pd_launch() -> FleetLaunch:
    """One prefill server on one node, three decode servers of two nodes each, and a router."""
    prefill = RoleLaunch(role="prefill", servers=1, requests=4, gpus_per_node=4, ports=(30000, 8998), image="img:1",
                         ranks=(RankLaunch(node_rank=0, argv=SERVE + ("--port", "30000"), serves=True, verdict="ok"),))
    decode = RoleLaunch(role="decode", servers=3, requests=40, gpus_per_node=8, ports=(30000,), image="img:1",
                        ranks=ranks(2), rank_flag="--node-rank")
    router = RoleLaunch(role="router", servers=1, requests=0, gpus_per_node=0, ports=(8000,), image="img:1",
                        ranks=(RankLaunch(node_rank=0, argv=("router", "--decode", "http://decode:30000")),),
                        depends_on=("prefill", "decode"))
    return FleetLaunch(engine="e", version="1", layout="pd", roles=(prefill, decode, router))


def check_object(doc: dict) -> None:
    """The fields every object of the stream must have, by kind (a minimal schema check)."""
    assert doc["apiVersion"] in ("apps/v1", "v1", "leaderworkerset.x-k8s.io/v1")
    name = doc["metadata"]["name"]
    assert name == name.lower() and len(name) <= 63 and all(c.isalnum() or c == "-" for c in name)
    if doc["kind"] == "Service":
        assert doc["spec"]["selector"] and all(p["port"] == p["targetPort"] for p in doc["spec"]["ports"])
        return
    pods = ([doc["spec"]["template"]] if doc["kind"] == "Deployment" else
            [doc["spec"]["leaderWorkerTemplate"]["leaderTemplate"], doc["spec"]["leaderWorkerTemplate"]["workerTemplate"]])
    for pod in pods:
        (c,) = pod["spec"]["containers"]
        assert c["image"] and all(isinstance(a, str) for a in c["command"])
        assert {v["name"] for v in pod["spec"]["volumes"]} == {m["name"] for m in c["volumeMounts"]} == {"shm"}
    if doc["kind"] == "Deployment":
        assert doc["spec"]["selector"]["matchLabels"].items() <= doc["spec"]["template"]["metadata"]["labels"].items()


def test_the_kubernetes_stream_has_a_workload_and_a_service_per_role():
    docs = list(yaml.safe_load_all(kubernetes(pd_launch(), "model")))
    for doc in docs:
        check_object(doc)
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("Deployment", "model-prefill"), ("Service", "prefill"), ("LeaderWorkerSet", "model-decode"),
        ("Service", "decode"), ("Deployment", "model-router"), ("Service", "router")]
    prefill = docs[0]["spec"]["template"]["spec"]["containers"][0]
    assert prefill["resources"]["limits"]["nvidia.com/gpu"] == 4
    assert [p["containerPort"] for p in prefill["ports"]] == [30000, 8998]
    assert "resources" not in docs[4]["spec"]["template"]["spec"]["containers"][0]  # the router takes no GPU


def test_a_server_across_nodes_is_a_leader_worker_set_addressed_by_the_controller_variables():
    lws = list(yaml.safe_load_all(kubernetes(pd_launch(), "model")))[2]
    spec = lws["spec"]
    assert spec["replicas"] == 3 and spec["leaderWorkerTemplate"]["size"] == 2
    for part in ("leaderTemplate", "workerTemplate"):
        c = spec["leaderWorkerTemplate"][part]["spec"]["containers"][0]
        cmd = c["command"]
        assert cmd[cmd.index("--node-rank") + 1] == "$(LWS_WORKER_INDEX)"
        assert cmd[cmd.index("--dist-init-addr") + 1] == "$(LWS_LEADER_ADDRESS):20000"
        assert not any(LEADER_ADDRESS in a.replace("$(LWS_LEADER_ADDRESS)", "") for a in cmd)  # no bare placeholder
        assert c["env"] == [{"name": "NCCL_DEBUG", "value": "WARN"}]
        assert c["resources"]["limits"]["nvidia.com/gpu"] == 8
    service = list(yaml.safe_load_all(kubernetes(pd_launch(), "model")))[3]
    assert service["spec"]["selector"] == {"leaderworkerset.sigs.k8s.io/name": "model-decode", "role": "leader"}


def test_compose_only_where_one_host_holds_the_fleet():
    text, why = compose(pd_launch(), 8)
    assert text is None and why == "a server spans nodes: compose describes one host (use the Kubernetes manifest)"
    one = FleetLaunch(engine="e", version="1", layout="tp2", roles=(
        RoleLaunch(role="server", servers=3, requests=10, gpus_per_node=2, ports=(30000,), image="img:1",
                   ranks=(RankLaunch(node_rank=0, argv=SERVE),)),))
    text, why = compose(one, 8)
    assert why is None and text is not None
    services = yaml.safe_load(text)["services"]
    assert list(services) == ["server-0", "server-1", "server-2"]
    ids = [s["deploy"]["resources"]["reservations"]["devices"][0]["device_ids"] for s in services.values()]
    assert ids == [["0", "1"], ["2", "3"], ["4", "5"]]
    assert [s["ports"] for s in services.values()] == [["30000:30000"], ["30001:30000"], ["30002:30000"]]
    assert compose(one, 4) == (None, "the fleet takes 6 GPUs, more than one host's 4: use the Kubernetes manifest")


@pytest.mark.parametrize("model, name", [("Qwen/Qwen3.5-397B-A17B", "qwen3-5-397b-a17b"),
                                         ("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8",
                                          "nvidia-nemotron-3-ultra-550b-a55b-fp8"), ("/x/", "model")])
def test_the_app_name_is_a_dns_label(model, name):
    assert app_name(model) == name
