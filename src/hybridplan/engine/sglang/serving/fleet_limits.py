"""What a sized sglang fleet layout rests on beyond its pools: the verdict's confidence, the bytes a session hands
from a prefill server to a decode server, and where a limit the memory model does not know (compute, network) is
likely to bind before the pools do. None of it ranks a layout: the memory model knows no throughput."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from hybridplan.engine.fleet_requests import FleetRequest
from hybridplan.engine.sglang.releases import for_version
from hybridplan.engine.sglang.serving.fleet_shapes import TRANSFER_BACKEND, Sized
from hybridplan.hardware.catalog import GPU

if TYPE_CHECKING:
    from hybridplan.engine.sglang.serving.loading import Loaded

GIB = 1 << 30


def confidence_of(s: Sized, req: FleetRequest, card: GPU) -> str | None:
    """The verdict's confidence level at the server's capacity (evidence.py: what measured launches it rests on)."""
    from hybridplan.engine.sglang.serving.verdict import predict

    o = s.outcome
    if o is None or o.loaded is None or o.timeline is None or s.planner is None:
        return None
    v = predict(o.loaded, o.timeline, request_tokens=req.request_length, concurrency=s.capacity, gpu=card,
                evidence=s.planner.points(card))
    return v.confidence.level if v.confidence is not None else None


def handover(prefill: Sized, req: FleetRequest) -> dict[str, int] | None:
    """The bytes one session's prefill server holds for it and hands to a decode server (disaggregation/
    mooncake/conn.py sends each prefill rank's KV pages and state slot): one state slot and L tokens of KV on every
    rank that holds the request (its attention-TP ranks; a prefill server here is TP alone), per rank as the pools
    size them."""
    o = prefill.outcome
    if o is None or o.loaded is None:
        return None
    loaded: Loaded = o.loaded
    engine = for_version(loaded.version)
    args, geo = loaded.args, loaded.geometry
    ranks = int(args["attn_tp_size"])
    state = engine.stage_per_req(args, geo) * ranks
    kv = engine.kv_cell(args, geo, loaded.draft).target * req.request_length * ranks
    return {"state_bytes": state, "kv_bytes": kv, "total_bytes": state + kv, "ranks": ranks}


def _graph_line(s: Sized) -> str | None:
    """Decode steps past the captured graphs' batch run eagerly: compute binds before memory there."""
    o = s.outcome
    if o is None or o.loaded is None:
        return None
    bs = o.loaded.args.get("cuda_graph_decode_max_bs")
    per_rank = math.ceil(s.capacity / s.shape.attn_dp)
    if not isinstance(bs, int) or bs <= 0 or per_rank <= bs:
        return None
    return (f"at {s.capacity} sessions each attention rank decodes {per_rank} at once, above the {bs} its decode "
            "CUDA graphs capture: those steps run eagerly, so compute is likely to bind before memory")


def limits(s: Sized, req: FleetRequest, prefill: Sized | None = None) -> tuple[str, ...]:
    """Where a layout that fits in memory is likely to meet a limit the model does not know (compute, network)."""
    if s.capacity == 0:
        return ()
    sh, out = s.shape, []
    if sh.nodes > 1 and sh.pp == 1:
        out.append(f"TP{sh.tp} spans {sh.nodes} nodes: every layer's all-reduce crosses the inter-node network "
                   "(its bandwidth is not modelled)")
    if sh.pp > 1:
        out.append(f"PP{sh.pp}: each batch passes {sh.pp} stages in turn" +
                   (f" across {sh.nodes} nodes (only activations cross)" if sh.nodes > 1 else "") +
                   "; pipeline bubbles cost throughput the model does not know")
    if sh.attn_dp > 1:
        out.append(f"attention-DP {sh.attn_dp}: each rank holds its own pools ({s.capacity // sh.attn_dp} sessions "
                   "each); an uneven spread of sessions fills one rank first")
    graph = _graph_line(s)
    if graph:
        out.append(graph)
    if prefill is not None:
        h = handover(prefill, req)
        if h is not None:
            out.append(f"each session hands {h['state_bytes'] / GIB:.2f} GiB of state + {h['kv_bytes'] / GIB:.2f} "
                       f"GiB of KV from prefill to decode over {TRANSFER_BACKEND}: the network's bandwidth is not "
                       "modelled")
        out.append(f"one prefill server ({prefill.shape.words}) is listed, holding {prefill.capacity} session(s) of "
                   f"{req.request_length:,} tokens between prefill and handover: its compute (prefill throughput, "
                   "time to first token) is not modelled; add prefill servers by measured time to first token")
    return tuple(out)
