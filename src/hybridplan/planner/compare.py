"""`compare`: one model, one card and one request length on every modelled engine, side by side.

With `memory_gib` each engine gets the same memory for its caches (SGLang's pool budget, which its state and KV pools
share; vLLM's available KV memory, one paged pool of attention and state pages). With a card alone each engine takes
what its own memory timeline leaves on that card, so the comparison is the one a user deploying on that card sees.
Each engine runs its own defaults for the rest; the numbers come from each engine's `explain`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridplan.engine.api import engines, for_engine, releases
from hybridplan.engine.requests import CompareRequest
from hybridplan.errors import BadInput

KV_DTYPES = ("auto", "fp8")  # --kv-cache-dtype as `compare` takes it; each engine spells it its own way
MIB = 2**20


def compare_engines(req: CompareRequest, versions: Mapping[str, str | None] | None = None) -> dict[str, Any]:
    """Each engine's answer at `req.request_length` tokens and why they differ (`versions`: the release of each
    engine to model, by name; the newest by default)."""
    if req.kv_cache_dtype not in KV_DTYPES:
        raise BadInput(f"--kv-cache-dtype: {req.kv_cache_dtype!r} (auto or fp8)")
    versions = versions or {}
    for name, version in versions.items():
        if version is not None and version not in releases(name):
            raise BadInput(f"--{name}-version: {for_engine(name).display_name} {version} is not modelled "
                           f"({', '.join(releases(name))})")
    if req.memory_gib is None and req.gpu is None:
        raise BadInput("--memory-gib: give the cache memory per rank, or --gpu to size each engine from the card")
    legs = {name: for_engine(name, versions.get(name)).compare_leg(req) for name in engines()}
    why = [] if req.memory_gib is not None else [
        f"on one {req.gpu} " + " and ".join(
            f"{name}{' keeps' if i == 0 else ''} {leg.cache_memory_gib:.2f} GiB for {leg.pools} ({leg.memory_source})"
            for i, (name, leg) in enumerate(legs.items()))]
    why += [leg.why for leg in legs.values()]
    why.append("per request on one rank: " + ", ".join(
        f"{name} {leg.request_bytes / MIB:,.1f} MiB ({leg.state_bytes / MIB:,.1f} MiB of it {leg.state_words})"
        for name, leg in legs.items()))
    return {"model": req.model, "memory_gib": req.memory_gib, "request_length": req.request_length, "tp": req.tp,
            "gpu": req.gpu, **{name: leg.leg for name, leg in legs.items()}, "why": why}
