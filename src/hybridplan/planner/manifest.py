"""Deployment manifests for a fleet launch, rendered from its typed roles (engine/requests.py::FleetLaunch), never from
a template per case: Kubernetes objects (a Deployment and a Service per single-node role, a LeaderWorkerSet of
`nodes`-pod groups for a role whose servers span nodes), or a docker compose file when the whole fleet fits one host.

A multi-node command names node 0's address as LEADER_ADDRESS and its own rank after the role's `rank_flag`: in a
LeaderWorkerSet those become the variables the controller sets in every pod ($(LWS_LEADER_ADDRESS), and
$(LWS_WORKER_INDEX), 0 for the leader); Kubernetes expands $(VAR) in a container's command. Services are named by
role, the host names a router reaches its servers by.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from hybridplan.engine.fleet_requests import LEADER_ADDRESS, FleetLaunch, FleetRequest, RankLaunch, RoleLaunch

LWS_API = "leaderworkerset.x-k8s.io/v1"
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
GPU_RESOURCE = "nvidia.com/gpu"


def _shm() -> dict[str, Any]:
    """/dev/shm as a memory volume (NCCL and the engines' IPC want more than the 64 MiB default); a new dict each
    time, so the YAML carries no anchors."""
    return {"name": "shm", "emptyDir": {"medium": "Memory"}}


def app_name(model: str) -> str:
    """A DNS-1123 name for the deployment from the model id ("Qwen/Qwen3.5-397B-A17B" -> "qwen3-5-397b-a17b")."""
    name = re.sub(r"[^a-z0-9]+", "-", model.rpartition("/")[2].lower()).strip("-")
    return (name or "model")[:40].rstrip("-")


def _node_command(rank: RankLaunch, role: RoleLaunch) -> list[str]:
    """A LeaderWorkerSet pod's argv: LEADER_ADDRESS and the value after the role's rank flag become the variables the
    controller sets in the pod."""
    argv = [a.replace(LEADER_ADDRESS, "$(LWS_LEADER_ADDRESS)") for a in rank.argv]
    if role.rank_flag in argv:
        argv[argv.index(role.rank_flag) + 1] = "$(LWS_WORKER_INDEX)"
    return argv


def _container(role: RoleLaunch, argv: list[str], rank: RankLaunch) -> dict[str, Any]:
    c: dict[str, Any] = {"name": role.role, "image": role.image, "command": argv,
                         "ports": [{"containerPort": p} for p in role.ports],
                         "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}]}
    if rank.env:
        c["env"] = [{"name": k, "value": v} for k, v in rank.env]
    if role.gpus_per_node:
        c["resources"] = {"limits": {GPU_RESOURCE: role.gpus_per_node}}
    return c


def _pod(role: RoleLaunch, argv: list[str], rank: RankLaunch, labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"labels": labels},
            "spec": {"containers": [_container(role, argv, rank)], "volumes": [_shm()]}}


def _labels(app: str, role: RoleLaunch) -> dict[str, str]:
    return {"app.kubernetes.io/name": app, "app.kubernetes.io/component": role.role}


def _service(app: str, role: RoleLaunch, selector: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": role.role, "labels": _labels(app, role)},
            "spec": {"selector": selector, "ports": [{"name": f"p{p}", "port": p, "targetPort": p}
                                                     for p in role.ports]}}


def _workloads(app: str, role: RoleLaunch) -> list[dict[str, Any]]:
    """A role's Kubernetes objects: a Deployment (one-node servers) or a LeaderWorkerSet, and its Service."""
    labels = _labels(app, role)
    name = f"{app}-{role.role}"
    if len(role.ranks) == 1:
        rank = role.ranks[0]
        deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
                      "spec": {"replicas": role.servers, "selector": {"matchLabels": labels},
                               "template": _pod(role, list(rank.argv), rank, labels)}}
        return [deployment, _service(app, role, labels)]
    leader, worker = role.ranks[0], role.ranks[1]
    lws = {"apiVersion": LWS_API, "kind": "LeaderWorkerSet", "metadata": {"name": name, "labels": labels},
           "spec": {"replicas": role.servers, "startupPolicy": "LeaderCreated", "leaderWorkerTemplate": {
               "size": len(role.ranks),
               "leaderTemplate": _pod(role, _node_command(leader, role), leader, {**labels, "role": "leader"}),
               "workerTemplate": _pod(role, _node_command(worker, role), worker, {**labels, "role": "worker"})}}}
    return [lws, _service(app, role, {LWS_NAME_LABEL: name, "role": "leader"})]


def kubernetes(launch: FleetLaunch, app: str) -> str:
    """Every role's objects as one multi-document YAML stream."""
    docs = [doc for role in launch.roles for doc in _workloads(app, role)]
    return yaml.safe_dump_all(docs, sort_keys=False, width=1 << 16)


def compose(launch: FleetLaunch, gpus_per_node: int) -> tuple[str | None, str | None]:
    """(the compose file, None) when every server runs on one host and their GPUs fit it; else (None, why)."""
    if any(len(role.ranks) > 1 for role in launch.roles):
        return None, "a server spans nodes: compose describes one host (use the Kubernetes manifest)"
    total = sum(role.servers * role.gpus_per_node for role in launch.roles)
    if total > gpus_per_node:
        return None, f"the fleet takes {total} GPUs, more than one host's {gpus_per_node}: use the Kubernetes manifest"
    services: dict[str, Any] = {}
    names: dict[str, list[str]] = {}  # role -> its services
    gpu = 0
    fronted = any(role.depends_on for role in launch.roles)  # a router is the one entry point, else every server is
    for role in launch.roles:
        rank = role.ranks[0]
        for i in range(role.servers):
            svc: dict[str, Any] = {"image": role.image, "command": list(rank.argv), "ipc": "host",
                                   "expose": [str(p) for p in role.ports],
                                   "networks": {"default": {"aliases": [role.role]}}}
            if rank.env:
                svc["environment"] = dict(rank.env)
            if role.gpus_per_node:
                ids = [str(gpu + k) for k in range(role.gpus_per_node)]
                gpu += role.gpus_per_node
                svc["deploy"] = {"resources": {"reservations": {"devices": [
                    {"driver": "nvidia", "device_ids": ids, "capabilities": ["gpu"]}]}}}
            if role.depends_on:
                svc["depends_on"] = [n for dep in role.depends_on for n in names.get(dep, [])]
            if role.depends_on or not fronted:
                svc["ports"] = [f"{role.ports[0] + i}:{role.ports[0]}"]
            name = role.role if role.servers == 1 else f"{role.role}-{i}"
            names.setdefault(role.role, []).append(name)
            services[name] = svc
    return yaml.safe_dump({"services": services}, sort_keys=False, width=1 << 16), None


def manifests(launch: FleetLaunch, req: FleetRequest) -> dict[str, Any]:
    """Both renderings of a launch (compose where one host holds it)."""
    text, why = compose(launch, req.gpus_per_node)
    return {"kubernetes": kubernetes(launch, app_name(req.model)), "compose": text, "compose_why": why}
