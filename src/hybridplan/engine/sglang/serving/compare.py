"""sglang's side of `compare`: its launch at the release's defaults, explained on the cache memory or the card, and
why it serves what it serves (a fixed state pool of S-slot requests beside the KV pool)."""

from __future__ import annotations

from typing import Any

from hybridplan.engine.release import ServingEngine
from hybridplan.engine.requests import CompareLeg, CompareRequest
from hybridplan.errors import BadInput


def leg(engine: ServingEngine, req: CompareRequest) -> CompareLeg:
    """Explain the compare launch (on `memory_gib` as the pool budget, else on the card's timeline) and summarise."""
    from hybridplan.engine.sglang.serving.explain import explain
    from hybridplan.engine.sglang.serving.loading import launch
    from hybridplan.hardware.catalog import from_options

    card = from_options(req.gpu, None) if req.gpu is not None else None
    command = engine.compare_launch(req)
    if req.memory_gib is None:
        s = explain(launch(command), gpu=card, version=engine.version)
    else:
        s = explain(launch(command), budget=req.memory_gib, platform=card.platform() if card else None,
                    version=engine.version)
    if "error" in s:
        raise BadInput(f"sglang: {s['error'].get('message', s['error'])}")
    length = req.request_length
    state = s["slots_per_request"] * s["state_bytes_per_slot"]
    kv = s["kv_bytes_per_token"] * length
    source = _source(s)
    return CompareLeg(
        leg={"version": s["engine"]["version"], "command": command, "cache_memory_gib": s["pool_budget_gib"],
             "memory_source": source, "kv_tokens": s["max_total_num_tokens"], "state_slots": s["max_mamba_cache_size"],
             "slots_per_request": s["slots_per_request"], "max_running_requests": s["max_running_requests"],
             "requests_at_length": min(s["max_running_requests"], s["max_total_num_tokens"] // length),
             "binding_limit": s["binding_limit"], "state_bytes_per_request": state, "kv_bytes_per_request": kv},
        cache_memory_gib=s["pool_budget_gib"], pools="its two pools", memory_source=source,
        why=(f"sglang keeps a fixed state pool of {s['max_mamba_cache_size']} slots beside the KV pool; a request holds "
             f"{s['slots_per_request']} slots ({state / 2**20:,.1f} MiB of state on one rank) and {length:,} KV tokens "
             f"({kv / 2**20:,.1f} MiB); the {s['binding_limit']} binds"),
        request_bytes=state + kv, state_bytes=state, state_words="state")


def _source(s: dict[str, Any]) -> str:
    """Where the pool budget came from: the caller's figure or the card's timeline at the default fraction."""
    memory = s.get("memory")
    if memory is None:
        return "given (--memory-gib)"
    frac = memory["timeline"]["mem_fraction_static"]["value"]
    return f"the card's memory timeline at the release's default --mem-fraction-static {frac:.3f} for this card"
