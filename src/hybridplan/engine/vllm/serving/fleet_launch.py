"""The launch of a vLLM fleet layout at its scale: each server's command at `--max-model-len L` and the lowest
`--gpu-memory-utilization` (from the engine default up to the evidence ceiling) at which every engine core's pool holds
its sessions, one command a node (the nodes past the first `--headless`), each fed back through `explain --engine
vllm` on the card and its refusals; a top-level `verdict` in the payload, where the engine model gives one, decides."""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from typing import Any

from hybridplan.engine.argv import with_flag
from hybridplan.engine.fleet_requests import LEADER_ADDRESS, FleetLaunch, FleetLayout, FleetRequest, RankLaunch, RoleLaunch
from hybridplan.engine.vllm.serving.fleet import DEFAULT_UTIL, PROGRAM, UTIL_STEP, ceiling, core
from hybridplan.errors import BadInput, EngineRefusal

PORT = 8000  # vllm serve's --port default


def image(version: str) -> str:
    """The project's container image of the release (vllm/vllm-openai on Docker Hub, tagged v<release>)."""
    return f"vllm/vllm-openai:v{version}"


def launch(req: FleetRequest, layout: FleetLayout, servers: Mapping[str, int], version: str) -> FleetLaunch:
    """The one role of a vLLM layout (a server) at `servers["server"]` servers."""
    from hybridplan.engine.vllm.engine import for_version

    if layout.refusal is not None or not layout.roles:
        raise BadInput(f"{layout.name}: {layout.refusal or 'no server'}")
    r = layout.roles[0]
    n = max(1, servers.get(r.role, r.count))
    per_server = math.ceil(req.concurrency / n)
    engine = for_version(version)
    reg = engine.registry()
    text = shlex.join(r.launch)
    dp = int(engine.parse_command(text).values.get("data_parallel_size", 1))
    per_core = math.ceil(per_server / dp)
    util = _lowest_util(text, per_core, req, version)
    flags = tuple(r.launch[len(PROGRAM) + 1:]) + ("--max-model-len", str(req.request_length),
                                                  "--gpu-memory-utilization", f"{util:g}")
    head = tuple(r.launch[:len(PROGRAM) + 1])
    ranks = []
    for i in range(r.nodes):
        mine = flags if r.nodes == 1 else with_flag(flags, "--node-rank", str(i), reg)
        if i > 0:
            mine = with_flag(mine, "--headless", None, reg)
        serves, verdict = _verdict(shlex.join(head + mine), per_core, dp, req, version)
        ranks.append(RankLaunch(node_rank=i, argv=head + mine, serves=serves, verdict=verdict))
    role = RoleLaunch(role=r.role, servers=n, requests=per_server, gpus_per_node=r.gpus // r.nodes, ports=(PORT,),
                      image=image(version), ranks=tuple(ranks), rank_flag="--node-rank" if r.nodes > 1 else None)
    notes = (f"{LEADER_ADDRESS}: node 0's address (--master-addr), which every node reaches; the nodes past the first "
             "run --headless workers (entrypoints/cli/serve.py::run_headless); where the default route does not reach "
             "it, set NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME to the interface that does",) if r.nodes > 1 else ()
    return FleetLaunch(engine="vllm", version=version, layout=layout.name, roles=(role,), notes=notes)


def _lowest_util(text: str, per_core: int, req: FleetRequest, version: str) -> float:
    """The lowest utilization, from the engine default up to the evidence ceiling, whose pool holds `per_core`
    sessions of L (the ceiling when none does: the verdict then says so)."""
    top = ceiling()
    u = DEFAULT_UTIL
    while u < top and core(text, req, version, u).capacity < per_core:
        u = round(u + UTIL_STEP, 4)
    return min(u, top)


def _verdict(text: str, per_core: int, dp: int, req: FleetRequest, version: str) -> tuple[bool, str]:
    """`explain --engine vllm` on the card: a top-level `verdict` where the payload has one, else its refusal or its
    pool against the sessions each engine core carries."""
    from hybridplan.engine.vllm.serving.explain import explain_vllm

    try:
        d: dict[str, Any] = explain_vllm(text, version=version, kv_memory_gib=None, gpu=req.gpu)
    except (EngineRefusal, BadInput) as exc:
        return False, f"the engine refuses: {exc.message}"
    if isinstance(d.get("verdict"), dict):
        v = d["verdict"]
        return bool(v.get("serves")), str(v.get("why") or v)
    if "error" in d:
        return False, f"the engine refuses: {d['error'].get('message')}"
    conc, seqs = d.get("max_concurrency"), d["resolved"].get("max_num_seqs")
    if conc is None:
        return False, "no KV memory estimate on this card"
    holds = math.floor(conc) if seqs is None else min(math.floor(conc), int(seqs))
    where = f" an engine core ({dp} replicas)" if dp > 1 else ""
    return holds >= per_core, (f"{'serves' if holds >= per_core else 'does not serve'}: the pool holds "
                               f"{conc:.2f} sessions of {req.request_length:,} tokens{where} "
                               f"({d['kv_cache_tokens']:,} KV tokens, max_num_seqs {seqs}), {per_core} asked")
