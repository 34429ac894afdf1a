"""The layouts sglang runs one server in, and one server sized on a card for sessions of L tokens.

A shape is one server's parallel layout in sglang's own modes (TP, attention DP within TP, PP, the nodes it spans,
its prefill/decode role); `size` asks the evidence-bound planner (serving/plan.py) for the most sessions of L tokens a
server of that shape holds at the engine's defaults (the planner sets only the mem fraction within the evidence and
the state split: the balanced ratio or the pin), and what stops one more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hybridplan.engine.registry import FlagRegistry
from hybridplan.engine.fleet_requests import LEADER_ADDRESS, FleetRequest
from hybridplan.engine.search import Candidate
from hybridplan.engine.sglang.command import LaunchCommand
from hybridplan.engine.sglang.releases import for_version
from hybridplan.engine.sglang.serving.plan import Outcome, Planner, Target
from hybridplan.errors import EngineRefusal
from hybridplan.hardware.catalog import GPU
from hybridplan.limits import MAX_REQUESTS
from hybridplan.monotone import largest_true

PROGRAM = ("python", "-m", "sglang.launch_server")
DIST_PORT = 20000  # --dist-init-addr's port on the first node
TRANSFER_BACKEND = "mooncake"  # the PD docs' transfer engine (server_args.py choices: mooncake, nixl, ...)
MAX_NODES = 4  # the widest server enumerated: 4 nodes
PP_SIZES = (2, 4)
BARE = Candidate(knobs=())  # the engine's defaults: the planner sets only the fraction and the state split


@dataclass(frozen=True)
class Shape:
    """One server's parallel layout: TP x PP GPUs, attention DP within TP, the nodes it spans, its PD role."""

    tp: int
    pp: int = 1
    attn_dp: int = 1
    nodes: int = 1
    mode: str = "null"  # --disaggregation-mode: null (aggregated), prefill, decode

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    @property
    def words(self) -> str:
        text = f"TP{self.tp}" + (f" PP{self.pp}" if self.pp > 1 else "") + \
            (f" attention-DP {self.attn_dp}" if self.attn_dp > 1 else "")
        return text + (f" ({self.nodes} nodes)" if self.nodes > 1 else "")

    def flags(self, reg: FlagRegistry, node_rank: int = 0) -> tuple[str, ...]:
        """The flags that lay the server out (node `node_rank`'s), in the release's spelling."""
        out: tuple[str, ...] = ("--tp-size", str(self.tp))
        if self.pp > 1:
            out += ("--pp-size", str(self.pp))
        if self.attn_dp > 1:  # --attn-dp-size where the release has it, else the deprecated --dp + switch
            out += (("--attn-dp-size", str(self.attn_dp)) if reg.knows("--attn-dp-size")
                    else ("--dp-size", str(self.attn_dp), "--enable-dp-attention"))
        if self.nodes > 1:
            out += ("--nnodes", str(self.nodes), "--node-rank", str(node_rank),
                    "--dist-init-addr", f"{LEADER_ADDRESS}:{DIST_PORT}")
        if self.mode != "null":
            out += ("--disaggregation-mode", self.mode, "--disaggregation-transfer-backend", TRANSFER_BACKEND)
        return out


def server_sizes(per_node: int, most: int) -> list[int]:
    """The GPU counts one server is enumerated at: powers of two within a node, then 2 and 4 whole nodes."""
    inside = [g for g in (2 ** i for i in range(11)) if g <= min(per_node, most)]
    return inside + [per_node * n for n in (2, MAX_NODES) if per_node * n <= most and per_node * n not in inside]


def shapes(gpus: int, per_node: int, mode: str = "null") -> list[Shape]:
    """sglang's layouts of one server of `gpus` GPUs: TP, TP with attention DP over every rank, and TP x PP."""
    nodes = max(1, math.ceil(gpus / per_node))
    out = [Shape(tp=gpus, nodes=nodes, mode=mode)]
    if gpus > 1:
        out.append(Shape(tp=gpus, attn_dp=gpus, nodes=nodes, mode=mode))
    out += [Shape(tp=gpus // p, pp=p, nodes=nodes, mode=mode) for p in PP_SIZES if gpus % p == 0 and gpus > p]
    return out


@dataclass(frozen=True, kw_only=True)
class Sized:
    """One shape on the card: the most sessions of L a server holds and its pools at that load, or why none."""

    shape: Shape
    argv: tuple[str, ...]  # node 0's flags the sizing is for
    capacity: int
    kv_tokens: int = 0
    state_slots: int = 0
    binding: str = ""
    why: str = ""
    outcome: Outcome | None = None  # the planner's answer at the capacity
    planner: Planner | None = None


def binding_of(reason: str | None) -> str:
    """What a failing candidate ran out of, from the planner's own reason."""
    text = (reason or "").lower()
    for key, name in (("weights", "weights"), ("kv pool", "KV"), ("max_running_requests", "max_running_requests"),
                      ("measured failing", "a measured failure"), ("mamba", "state slots"), ("state", "state slots")):
        if key in text:
            return name
    return "memory"


def size(shape: Shape, req: FleetRequest, card: GPU, version: str, env: tuple[tuple[str, str], ...] = ()) -> Sized:
    """The shape's capacity: the largest C whose sessions of L the planner serves at the engine's defaults (none
    where the engine refuses the layout, with its words)."""
    reg = for_version(version).registry()
    argv = ("--model-path", req.model) + shape.flags(reg)
    try:
        return _search(shape, argv, req, card, version, env)
    except EngineRefusal as exc:
        return Sized(shape=shape, argv=argv, capacity=0, binding="the engine refuses", why=exc.message)


def _search(shape: Shape, argv: tuple[str, ...], req: FleetRequest, card: GPU, version: str,
            env: tuple[tuple[str, str], ...]) -> Sized:
    pl = Planner(Target(model=req.model, gpu=card, request_length=req.request_length, concurrency=1,
                        command=LaunchCommand(env=env, argv=argv), version=version, evidence=req.evidence,
                        measured=req.measured))

    def fits(c: int) -> bool:
        return pl.evaluate(BARE, C=c).fits

    first = pl.evaluate(BARE, C=1)
    if not first.fits:
        return Sized(shape=shape, argv=argv, capacity=0, binding=binding_of(first.reason),
                     why=first.reason or "it does not fit")
    hi = max(1, first.served * shape.attn_dp)
    while fits(hi) and hi < MAX_REQUESTS:  # the C = 1 balance is a guess at the top: grow past it while it fits
        hi = min(MAX_REQUESTS, hi * 2)
    cap = largest_true(1, hi, fits)
    at = pl.evaluate(BARE, C=cap)
    beyond = pl.evaluate(BARE, C=cap + 1)
    assert at.split is not None  # a fitting outcome carries its split
    sizing = at.split.sizing
    return Sized(shape=shape, argv=argv, capacity=cap, outcome=at, planner=pl,
                 kv_tokens=int(sizing["max_total_num_tokens"]) * shape.attn_dp,
                 state_slots=int(sizing["max_mamba_cache_size"]) * shape.attn_dp,
                 binding=binding_of(beyond.reason), why=beyond.reason or "")
