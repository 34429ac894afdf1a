"""`fleet` on sglang: every layout sglang runs a model in on a card, each server sized for sessions of L tokens.

The layouts are sglang's own parallel modes: TP, TP with attention DP (each DP rank its own state and KV pools), TP x
PP, each on one node or across nodes (`--nnodes`, `--node-rank`, `--dist-init-addr`), replicated as whole servers;
and prefill/decode disaggregation (`--disaggregation-mode`), where the decode servers hold every session's state and
KV (a decode server keeps no radix cache: one state slot a session) and one prefill server holds what its chunked
prefill needs. Each server is sized by the evidence-bound planner (serving/plan.py: the mem fraction within the
evidence, the balanced ratio or the pin) at the engine's defaults: its capacity is the most sessions of L tokens the
planner finds serving, with no trade-off knob (dtype, radix strategy) applied. Nothing here ranks: planner/fleet.py
ranks the layouts of every engine by the GPUs they need.
"""

from __future__ import annotations

import math

from hybridplan.engine.fleet_requests import FleetLayout, FleetRequest, FleetRole
from hybridplan.engine.sglang.serving.fleet_limits import confidence_of, handover, limits
from hybridplan.engine.sglang.serving.fleet_shapes import MAX_NODES, PROGRAM, Shape, Sized, server_sizes, shapes, size
from hybridplan.errors import BadInput
from hybridplan.hardware.catalog import GPU, from_options


def role(kind: str, s: Sized, *, scales: bool, count: int = 1) -> FleetRole:
    """A sized shape as a layout's role."""
    return FleetRole(role=kind, scales=scales, count=count, gpus=s.shape.gpus, nodes=s.shape.nodes,
                     parallel=s.shape.words, capacity=s.capacity, kv_tokens=s.kv_tokens,
                     state_slots=s.state_slots if s.capacity else None, binding=s.binding, why=s.why,
                     launch=PROGRAM + s.argv)


def card_of(req: FleetRequest) -> GPU:
    card = from_options(req.gpu, None)
    if card is None:
        raise BadInput("fleet needs --gpu (a catalog card)")
    return card


def layouts(req: FleetRequest, version: str) -> list[FleetLayout]:
    """Every aggregated and disaggregated layout up to the largest server (the GPUs available, at most 4 nodes)."""
    card = card_of(req)
    most = min(req.gpus_available or MAX_NODES * req.gpus_per_node, MAX_NODES * req.gpus_per_node)
    sizes = server_sizes(req.gpus_per_node, most)
    out: list[FleetLayout] = []
    aggregated = [size(sh, req, card, version) for g in sizes for sh in shapes(g, req.gpus_per_node)]
    for s in aggregated:
        out.append(_layout(version, s.shape.words, (role("server", s, scales=True),), s, req,
                           limits=limits(s, req), confidence=confidence_of(s, req, card)))
    prefill = smallest_prefill(req, card, version, sizes)
    for g in sizes:
        for sh in shapes(g, req.gpus_per_node, "decode"):
            d = size(sh, req, card, version)
            name = f"PD: prefill {prefill.shape.words if prefill else '-'} + decode {sh.words}"
            if prefill is None:
                out.append(FleetLayout(engine="sglang", version=version, name=name,
                                       refusal="no prefill server holds one session of L tokens on this card"))
                continue
            roles = (role("prefill", prefill, scales=False), role("decode", d, scales=True))
            out.append(_layout(version, name, roles, d, req, limits=limits(d, req, prefill),
                               confidence=confidence_of(d, req, card), handover=handover(prefill, req)))
    return out


def smallest_prefill(req: FleetRequest, card: GPU, version: str, sizes: list[int]) -> Sized | None:
    """The fewest-GPU TP server that, in prefill mode, holds one session of L tokens (None: none does)."""
    for g in sizes:
        s = size(Shape(tp=g, nodes=max(1, math.ceil(g / req.gpus_per_node)), mode="prefill"), req, card, version)
        if s.capacity > 0:
            return s
    return None


def _layout(version: str, name: str, roles: tuple[FleetRole, ...], s: Sized, req: FleetRequest, *,
            limits: tuple[str, ...], confidence: str | None, handover: dict[str, int] | None = None) -> FleetLayout:
    """A layout, refused when a role holds no session of L tokens (with the engine's reason)."""
    empty = next((r for r in roles if r.capacity == 0), None)
    refusal = None if empty is None else f"{empty.role} {empty.parallel}: {empty.why}"
    return FleetLayout(engine="sglang", version=version, name=name, roles=roles, refusal=refusal,
                       confidence=confidence if refusal is None else None, limits=limits if refusal is None else (),
                       handover=handover if refusal is None else None)
