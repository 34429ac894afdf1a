"""`compare`: one model, one card and one request length on every modelled engine, side by side.

With `memory_gib` each engine gets the same memory for its caches (SGLang's pool budget, which its state and KV pools
share; vLLM's available KV memory, one paged pool of attention and state pages). With a card alone each engine takes
what its own memory timeline leaves on that card, so the comparison is the one a user deploying on that card sees.
Each engine runs its own defaults for the rest, or, from one engine's whole launch (`command`), that launch on its
own engine and the settings it shares carried to the others (each leg says what it carried, added and could not
carry). An engine that would not start still answers: its verdict, why, and the cheapest change that would; one
whose model does not cover the launch says so beside the others. The numbers come from each engine's `explain`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from hybridplan.engine.api import builds, engines, for_engine, releases
from hybridplan.engine.requests import CompareLeg, CompareRequest
from hybridplan.errors import BadInput

KV_DTYPES = ("auto", "fp8")  # --kv-cache-dtype as `compare` takes it; each engine spells it its own way
MIB = 2**20


def _modelled_as(name: str, version: str) -> str | None:
    """The release or build engine `name` models `version` as (None: not a version it takes). Compare takes a
    version only where it is modelled as itself (a release, or a build an engine models as one, e.g. a page's
    pinned sglang build): its legs name the release they ran, with no room for the note a stand-in carries (explain
    and plan take any version string and say which release models it)."""
    try:
        return for_engine(name, version).version
    except BadInput:
        return None


def compare_engines(req: CompareRequest, versions: Mapping[str, str | None] | None = None) -> dict[str, Any]:
    """Each engine's answer at `req.request_length` tokens and why they differ (`versions`: the release of each
    engine to model, by name; the newest by default)."""
    versions = versions or {}
    for name, version in versions.items():
        if version is None:
            continue
        if _modelled_as(name, version) != version:
            raise BadInput(f"--{name}-version: {for_engine(name).display_name} {version} is not modelled "
                           f"({', '.join(releases(name) + builds(name))})")
    req = _from_launch(req, versions)
    if req.kv_cache_dtype not in KV_DTYPES:
        raise BadInput(f"--kv-cache-dtype: {req.kv_cache_dtype!r} (auto or fp8)")
    if req.memory_gib is None and req.gpu is None and req.gpu_memory_gib is None:
        raise BadInput("--memory-gib: give the cache memory per rank, or --gpu to size each engine from the card")
    legs: dict[str, CompareLeg] = {}
    unmodelled: dict[str, dict[str, Any]] = {}
    for name in engines():
        engine = for_engine(name, versions.get(name))
        try:
            legs[name] = engine.compare_leg(req)
        except BadInput as exc:  # the engine model does not cover this launch: said beside the others
            unmodelled[name] = {"version": engine.version, "modelled": False,
                                "error": {"message": exc.message, "type": "BadInput"}}
    if not legs:
        raise BadInput(next(iter(unmodelled.values()))["error"]["message"])
    sized = {name: leg for name, leg in legs.items() if leg.request_bytes is not None}  # a refusal may have none
    why = [] if req.memory_gib is not None or not sized else [
        f"on one {_card(req)} " + " and ".join(
            f"{name}{' keeps' if i == 0 else ''} {leg.cache_memory_gib or 0:.2f} GiB for {leg.pools} ({leg.memory_source})"
            for i, (name, leg) in enumerate(sized.items()))]
    why += [leg.why for leg in legs.values()]
    why += [f"{name} is not modelled for this launch: {u['error']['message']}" for name, u in unmodelled.items()]
    if sized:
        why.append("per request on one rank: " + ", ".join(
            f"{name} {(leg.request_bytes or 0) / MIB:,.1f} MiB ({(leg.state_bytes or 0) / MIB:,.1f} MiB of it "
            f"{leg.state_words})" for name, leg in sized.items()))
    out: dict[str, Any] = {"model": req.model, "memory_gib": req.memory_gib, "request_length": req.request_length,
                           "tp": req.tp, "gpu": req.gpu}
    if req.gpu_memory_gib is not None:
        out["gpu_memory_gib"] = req.gpu_memory_gib
    if req.command is not None:
        out["launch_engine"] = req.launch_engine
    out |= {name: legs[name].leg if name in legs else unmodelled[name] for name in engines()}
    return out | {"why": why}


def _from_launch(req: CompareRequest, versions: Mapping[str, str | None]) -> CompareRequest:
    """With a launch: the settings it shares, read by its own engine's parser (the model, TP and KV dtype come from
    it, not from the options); without one, the model the options name."""
    if req.command is None:
        if not req.model:
            raise BadInput("--model: name the model, or give a launch command after `--`")
        return req
    for flag, given in (("--model", req.model is not None), ("--tp", req.tp != 1),
                        ("--kv-cache-dtype", req.kv_cache_dtype != "auto")):
        if given:
            raise BadInput(f"{flag}: the launch command states it; give {flag} only without a command")
    source = req.launch_engine or engines()[0]
    settings = for_engine(source, versions.get(source)).launch_settings(req.command)
    return replace(req, model=settings.model, tp=settings.tp, kv_cache_dtype="auto", settings=settings,
                   launch_engine=source)


def _card(req: CompareRequest) -> str:
    """The card's name as the comparison line says it."""
    return req.gpu if req.gpu is not None else f"{req.gpu_memory_gib:g} GiB card"
