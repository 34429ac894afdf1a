"""What `fleet` asks an engine and gets back, engine-neutral (engine.release.ServingEngine.fleet_layouts and
fleet_launch): the target, each layout's roles sized on the card, and the launch of every role and rank. Apart from
engine/requests.py so a single-server answer does not build the fleet's types at start-up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LEADER_ADDRESS = "LEADER_ADDRESS"  # in a multi-node launch: the first node's address (a manifest fills it in)


@dataclass(frozen=True, kw_only=True)
class FleetRequest:
    """`fleet`: the layouts an engine can serve `model` in on `gpu` cards, for C concurrent sessions of L tokens.
    `gpus_available` bounds the largest server enumerated (and the planner's feasibility); a server spans nodes of
    `gpus_per_node` cards once it outgrows one."""

    model: str
    gpu: str
    request_length: int
    concurrency: int
    gpus_available: int | None = None
    gpus_per_node: int = 8
    evidence: Callable[..., Any] | None = None  # evidence.EvidenceSource: the measured launches on a card
    measured: Callable[..., Any] | None = None  # evidence.FailureLookup: measured launches that failed


@dataclass(frozen=True, kw_only=True)
class FleetRole:
    """One kind of server in a layout, sized by the engine for sessions of L tokens: what one server holds, what
    binds it, and the launch (node 0's) the sizing is for. A role that `scales` is replicated with the load (an
    aggregated server, a decode server); the others run `count` servers whatever the load (a prefill server)."""

    role: str  # "server" | "prefill" | "decode"
    scales: bool
    count: int
    gpus: int  # one server's GPUs
    nodes: int  # the nodes one server spans
    parallel: str  # how one server splits the model, in the engine's words ("TP8", "TP4 PP2", "TP8 attention-DP 8")
    capacity: int  # concurrent sessions of L tokens one server holds (0: not one)
    kv_tokens: int  # one server's KV pool(s), tokens
    state_slots: int | None  # one server's state slots (None: state pages share one pool with KV)
    binding: str  # what stops one more session: "state slots", "KV", "max_running_requests", "max_num_seqs", "weights"
    why: str  # that limit in numbers (the engine's words)
    launch: tuple[str, ...]  # node 0's launch command the sizing is for (the engine's parser reads it)
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, kw_only=True)
class FleetLayout:
    """One way an engine runs the model on the card: its roles, or why the engine cannot run it (`refusal`)."""

    engine: str
    version: str
    name: str  # "TP8", "TP16 (2 nodes)", "PD: prefill TP8 + decode TP8"
    roles: tuple[FleetRole, ...] = ()
    refusal: str | None = None
    confidence: str | None = None  # the verdict's confidence in the sizing (evidence.py's levels)
    limits: tuple[str, ...] = ()  # where a limit the model does not know (compute, network) is likely to bind
    handover: dict[str, int] | None = None  # PD: bytes one session hands from prefill to decode (state, kv, total)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class RankLaunch:
    """What one node of one server runs, and the engine's verdict on it on the card."""

    node_rank: int
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    serves: bool | None = None  # None: not an engine launch (a router): no verdict
    verdict: str = ""


@dataclass(frozen=True, kw_only=True)
class RoleLaunch:
    """Every node of one role's servers: `servers` copies of `ranks` (one entry per node of a server)."""

    role: str
    servers: int
    requests: int  # sessions each server is launched for
    gpus_per_node: int  # 0: no GPU (a router)
    ports: tuple[int, ...]  # the first serves HTTP; the others are what peers reach (a prefill's bootstrap)
    image: str
    ranks: tuple[RankLaunch, ...]
    rank_flag: str | None = None  # the flag whose value is the node's rank (a manifest sets it per node)
    depends_on: tuple[str, ...] = ()  # the roles it reaches by their role names as host names (a router)


@dataclass(frozen=True, kw_only=True)
class FleetLaunch:
    """The chosen layout at its scale: every role's launch, each fed back through the engine's verdict."""

    engine: str
    version: str
    layout: str
    roles: tuple[RoleLaunch, ...]
    notes: tuple[str, ...] = ()
