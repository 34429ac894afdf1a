"""`fleet`: the layouts every engine runs a model in on a card, ranked by the GPUs they need for C concurrent sessions
of L tokens (then by headroom: the sessions they hold beyond C), and the chosen layout's launch and manifests.

Each engine enumerates and sizes its own layouts (ServingEngine.fleet_layouts: a server's capacity in sessions, its
pools and what binds it); this module only scales them. A role that scales (an aggregated or a decode server) runs
ceil(C / capacity) servers, the others (a prefill server) their own count. Nothing here knows compute or network:
a layout is never ranked by throughput, and each engine says where such a limit is likely to bind (`limits`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from hybridplan.engine.release import ServingEngine
from hybridplan.engine.fleet_requests import FleetLaunch, FleetLayout, FleetRequest
from hybridplan.errors import BadInput

LAUNCH_TRIES = 3  # feasible layouts tried in rank order until one's every command serves
RANKING = ("ranked by the GPUs each layout needs for the sessions, then by headroom (sessions held beyond them); "
           "never by throughput, which the memory model does not know")


@dataclass(frozen=True, kw_only=True)
class Row:
    """One layout at the scale the load asks: servers per role, the GPUs they take and the sessions they hold."""

    layout: FleetLayout
    servers: dict[str, int] = field(default_factory=dict)
    gpus: int = 0
    sessions: int = 0
    feasible: bool = False
    why: str | None = None  # not feasible: the engine's refusal, or the GPUs it would need beyond those available

    def headroom(self, concurrency: int) -> float:
        return self.sessions / concurrency - 1 if self.sessions else -1.0


def scale(layout: FleetLayout, concurrency: int) -> dict[str, int]:
    """Servers per role for `concurrency` sessions: ceil(C / capacity) of a scaling role, a fixed role its count."""
    return {r.role: (math.ceil(concurrency / r.capacity) if r.scales else r.count) for r in layout.roles}


def within(layout: FleetLayout, gpus: int) -> int:
    """The most sessions the layout holds on at most `gpus` GPUs: its fixed roles first, then as many servers of its
    scaling roles (in order) as the rest allows."""
    if layout.refusal is not None:
        return 0
    left = gpus - sum(r.count * r.gpus for r in layout.roles if not r.scales)
    if left < 0:
        return 0
    held = 0
    for r in layout.roles:
        if r.scales and r.gpus > 0:
            n = left // r.gpus
            held, left = held + n * r.capacity, left - n * r.gpus
    return held


def row(layout: FleetLayout, req: FleetRequest) -> Row:
    """The layout scaled for C sessions, feasible when the engine runs it and the GPUs are available."""
    if layout.refusal is not None:
        return Row(layout=layout, why=layout.refusal)
    empty = next((r for r in layout.roles if r.capacity <= 0), None)
    if empty is not None or not any(r.scales for r in layout.roles):
        return Row(layout=layout, why=f"{empty.role} {empty.parallel} holds no session" if empty is not None
                   else "no role scales with the sessions")
    servers = scale(layout, req.concurrency)
    gpus = sum(servers[r.role] * r.gpus for r in layout.roles)
    sessions = sum(servers[r.role] * r.capacity for r in layout.roles if r.scales)
    if req.gpus_available is not None and gpus > req.gpus_available:
        return Row(layout=layout, servers=servers, gpus=gpus, sessions=sessions, why=(
            f"needs {gpus} GPUs, {req.gpus_available} available: {within(layout, req.gpus_available)} sessions fit "
            "on them"))
    return Row(layout=layout, servers=servers, gpus=gpus, sessions=sessions, feasible=True)


def ranked(layouts: Sequence[FleetLayout], req: FleetRequest) -> list[Row]:
    """Feasible first, fewest GPUs, then the most headroom; the rest after, the engine's refusals last."""
    rows = [row(x, req) for x in layouts]
    return sorted(rows, key=lambda r: (not r.feasible, r.layout.refusal is not None, r.gpus or math.inf,
                                       -r.headroom(req.concurrency)))


def best_sessions(layouts: Sequence[FleetLayout], gpus: int) -> int:
    """The most sessions any layout holds on at most `gpus` GPUs (never fewer for more GPUs)."""
    return max((within(x, gpus) for x in layouts), default=0)


def plan_fleet(req: FleetRequest, engines: Sequence[ServingEngine], pick: int | None = None) -> dict[str, Any]:
    """The `fleet --json` payload: every engine's layouts ranked, the chosen one's launch and its manifests."""
    from hybridplan.planner.manifest import manifests

    _check(req)
    rows = ranked([x for e in engines for x in e.fleet_layouts(req)], req)
    by_name = {e.name: e for e in engines}
    chosen, launch, tried = _choose(rows, req, by_name, pick)
    out: dict[str, Any] = {
        "model": req.model, "gpu": req.gpu, "request_length": req.request_length, "concurrency": req.concurrency,
        "gpus_available": req.gpus_available, "gpus_per_node": req.gpus_per_node,
        "engines": {e.name: e.version for e in engines},
        "rows": [_row_dict(i + 1, r, req) for i, r in enumerate(rows)],
        "chosen": None, "launch": None, "manifests": None, "tried": tried, "ranking": RANKING,
    }
    if chosen is not None and launch is not None:
        out["chosen"] = rows.index(chosen) + 1
        out["launch"] = asdict(launch)
        out["manifests"] = manifests(launch, req)
    elif not any(r.feasible for r in rows):
        out["why"] = _none_fits(rows, req)
    return out


def _check(req: FleetRequest) -> None:
    if req.request_length <= 0 or req.concurrency <= 0:
        raise BadInput("--request-length and --concurrency must be positive integers")
    if req.gpus_per_node <= 0 or (req.gpus_available is not None and req.gpus_available <= 0):
        raise BadInput("--gpus-per-node and --gpus-available must be positive integers")


def _choose(rows: list[Row], req: FleetRequest, engines: Mapping[str, ServingEngine],
            pick: int | None) -> tuple[Row | None, FleetLaunch | None, list[dict[str, Any]]]:
    """The first feasible row whose every command the engine's verdict says serves (or row `pick`, whatever its
    verdicts); the launches that did not serve are kept in `tried`."""
    if pick is not None:
        if not 1 <= pick <= len(rows) or not rows[pick - 1].feasible:
            raise BadInput(f"--pick: row {pick} is not a feasible layout (feasible rows: "
                           f"{', '.join(str(i + 1) for i, r in enumerate(rows) if r.feasible) or 'none'})")
        r = rows[pick - 1]
        return r, engines[r.layout.engine].fleet_launch(req, r.layout, r.servers), []
    tried: list[dict[str, Any]] = []
    for r in [x for x in rows if x.feasible][:LAUNCH_TRIES]:
        launch = engines[r.layout.engine].fleet_launch(req, r.layout, r.servers)
        bad = [f"{role.role} node {rank.node_rank}: {rank.verdict}" for role in launch.roles for rank in role.ranks
               if rank.serves is False]
        if not bad:
            return r, launch, tried
        tried.append({"row": rows.index(r) + 1, "layout": r.layout.name, "engine": r.layout.engine,
                      "not_serving": bad})
    return None, None, tried


def _row_dict(rank: int, r: Row, req: FleetRequest) -> dict[str, Any]:
    """A row as the JSON shows it: the scaling role's numbers per server, every role's sizing under `roles`."""
    lay = r.layout
    main = next((x for x in lay.roles if x.scales and x.capacity > 0), None)
    per_server = math.ceil(req.concurrency / r.servers[main.role]) if main is not None and r.servers else None
    return {
        "rank": rank, "engine": lay.engine, "version": lay.version, "layout": lay.name, "feasible": r.feasible,
        "why": r.why, "gpus": r.gpus or None, "servers": r.servers, "servers_total": sum(r.servers.values()) or None,
        "sessions": r.sessions or None, "requests_per_server": per_server,
        "requests_per_gpu": round(req.concurrency / r.gpus, 2) if r.gpus else None,
        "capacity_per_server": main.capacity if main else None,
        "kv_tokens_per_server": main.kv_tokens if main else None,
        "state_slots_per_server": main.state_slots if main else None,
        "binding": main.binding if main else None, "binding_why": main.why if main else None,
        "headroom": round(r.headroom(req.concurrency), 3) if r.sessions else None,
        "confidence": lay.confidence, "refusal": lay.refusal, "limits": list(lay.limits), "handover": lay.handover,
        "notes": list(lay.notes), "roles": [asdict(x) for x in lay.roles],
    }


def _none_fits(rows: list[Row], req: FleetRequest) -> str:
    """Why no layout serves: the GPUs available, or the engines' refusals."""
    if req.gpus_available is not None and any(r.gpus for r in rows):
        most = best_sessions([r.layout for r in rows], req.gpus_available)
        fewest = min(r.gpus for r in rows if r.gpus)
        return (f"no layout serves {req.concurrency} sessions of {req.request_length:,} tokens on "
                f"{req.gpus_available} GPUs: the fewest that do need {fewest}; {most} sessions fit on "
                f"{req.gpus_available}")
    return "no engine runs the model on this card in any layout (each row says why)"
