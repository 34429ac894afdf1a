"""The launch of a sglang fleet layout at its scale: every role's command for every node, planned for the sessions
each server carries and fed back through `explain` on the card (its verdict must say it serves, and its pools must
hold the sessions). A disaggregated layout adds sglang-router, which pairs each request's prefill and decode."""

from __future__ import annotations

import math
from collections.abc import Mapping

from hybridplan.engine.argv import with_flag
from hybridplan.engine.fleet_requests import LEADER_ADDRESS, FleetLaunch, FleetLayout, FleetRequest, FleetRole, RankLaunch, RoleLaunch
from hybridplan.engine.sglang.command import LaunchCommand, parse_command
from hybridplan.engine.sglang.releases import for_version
from hybridplan.engine.sglang.serving.fleet_shapes import DIST_PORT
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.hardware.catalog import GPU, from_options

PORT = 30000  # server_args.py: --port's default
BOOTSTRAP_PORT = 8998  # --disaggregation-bootstrap-port's default: where a decode server reaches its prefill server
ROUTER = ("python", "-m", "sglang_router.launch_router")
ROUTER_PORT = 8000


def image(version: str) -> str:
    """The project's container image of the release (lmsysorg/sglang on Docker Hub, tagged v<release>)."""
    return f"lmsysorg/sglang:v{version}"


def launch(req: FleetRequest, layout: FleetLayout, servers: Mapping[str, int], version: str) -> FleetLaunch:
    """Every role of `layout` at `servers` servers per role (a role not named runs its own count)."""
    if layout.refusal is not None:
        raise BadInput(f"{layout.name}: {layout.refusal}")
    card = from_options(req.gpu, None)
    if card is None:
        raise BadInput("fleet needs --gpu (a catalog card)")
    roles = []
    for r in layout.roles:
        n = max(1, servers.get(r.role, r.count))
        per_server = math.ceil(req.concurrency / n) if r.scales else r.capacity
        roles.append(_role(r, n, per_server, req, card, version))
    notes = []
    if any(r.nodes > 1 for r in layout.roles):
        notes.append(f"{LEADER_ADDRESS}: node 0's address, which every node of the server reaches on port {DIST_PORT} "
                     "(--dist-init-addr); where the default route does not reach it, set NCCL_SOCKET_IFNAME and "
                     "GLOO_SOCKET_IFNAME to the interface that does")
    if any(r.role == "prefill" for r in layout.roles):
        roles.append(_router(version))
        notes.append("the router is sglang-router's own CLI (pip install sglang-router; the docs' PD page), not the "
                     "engine's parser: no verdict; it pairs each request's prefill and decode servers by their role "
                     "names as host names")
    return FleetLaunch(engine="sglang", version=version, layout=layout.name, roles=tuple(roles), notes=tuple(notes))


def _role(r: FleetRole, servers: int, per_server: int, req: FleetRequest, card: GPU, version: str) -> RoleLaunch:
    """The role's command planned for `per_server` sessions, one rank a node, each with its verdict."""
    from hybridplan.engine.sglang.serving.plan import Target, plan

    reg = for_version(version).registry()
    cmd = parse_command(list(r.launch))
    answer = plan(Target(model=req.model, gpu=card, request_length=req.request_length, concurrency=per_server,
                         command=cmd, version=version, evidence=req.evidence, measured=req.measured))
    ports = (PORT, BOOTSTRAP_PORT) if r.role == "prefill" else (PORT,)
    if not answer["fits"]:
        rank = RankLaunch(node_rank=0, argv=tuple(r.launch), env=cmd.env, serves=False,
                          verdict=f"the planner finds no launch for {per_server} sessions: {answer['why']}")
        return RoleLaunch(role=r.role, servers=servers, requests=per_server, gpus_per_node=r.gpus // r.nodes,
                          ports=ports, image=image(version), ranks=(rank,))
    argv = with_flag(with_flag(tuple(answer["argv"]), "--host", "0.0.0.0", reg), "--port", str(PORT), reg)
    ranks = []
    for i in range(r.nodes):
        mine = with_flag(argv, "--node-rank", str(i), reg) if r.nodes > 1 else argv
        serves, verdict = _verdict(LaunchCommand(env=cmd.env, argv=mine), per_server, req, card, version)
        ranks.append(RankLaunch(node_rank=i, argv=cmd.program + mine, env=cmd.env, serves=serves, verdict=verdict))
    return RoleLaunch(role=r.role, servers=servers, requests=per_server, gpus_per_node=r.gpus // r.nodes, ports=ports,
                      image=image(version), ranks=tuple(ranks), rank_flag="--node-rank" if r.nodes > 1 else None)


def _verdict(cmd: LaunchCommand, sessions: int, req: FleetRequest, card: GPU, version: str) -> tuple[bool, str]:
    """`explain` on the card: its verdict, and whether the pools hold `sessions` sessions of L (per DP rank)."""
    from hybridplan.engine.sglang.serving.explain import explain

    try:
        d = explain(cmd, gpu=card, version=version, evidence=req.evidence)
    except EngineRefusal as exc:
        return False, f"the engine refuses: {exc.message}"
    if "error" in d or "memory" not in d:
        return False, f"the engine refuses: {d.get('error', {}).get('message', 'no memory timeline')}"
    v = d["memory"]["verdict"]
    dp = int(d["args"]["attn_dp_size"]["value"])
    per_rank = math.ceil(sessions / dp)
    holds, tokens = d["max_running_requests"], d["max_total_num_tokens"]
    fits = holds is not None and tokens is not None and holds >= per_rank and tokens >= per_rank * req.request_length
    level = (v.get("confidence") or {}).get("level")
    where = f" a rank ({dp} ranks)" if dp > 1 else ""
    text = (f"{'serves' if v['serves'] else 'fails (' + str(v['phase']) + ')'}: {v['why']}; its pools admit {holds} "
            f"sessions and {tokens:,} KV tokens{where}, {per_rank} sessions of {req.request_length:,} asked"
            + (f"; confidence {level}" if level else ""))
    return bool(v["serves"]) and fits, text


def _router(version: str) -> RoleLaunch:
    """sglang-router in PD mode, in front of the prefill and decode servers (reached by their role names)."""
    argv = ROUTER + ("--pd-disaggregation", "--prefill", f"http://prefill:{PORT}", "--decode", f"http://decode:{PORT}",
                     "--host", "0.0.0.0", "--port", str(ROUTER_PORT))
    return RoleLaunch(role="router", servers=1, requests=0, gpus_per_node=0, ports=(ROUTER_PORT,),
                      image=image(version), ranks=(RankLaunch(node_rank=0, argv=argv, verdict="not an engine launch"),),
                      depends_on=("prefill", "decode"))
