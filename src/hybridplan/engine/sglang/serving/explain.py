"""`explain`: what the engine will allocate for a launch command and why. The CLI prints this dict; the web API serves it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hybridplan.hardware.platform import Platform
from hybridplan.engine.sglang.releases import NAME
from hybridplan.engine.sglang.command import LaunchCommand
from hybridplan.engine.sglang.types import PoolBudget
from hybridplan.errors import EngineRefusal
from hybridplan.engine.sglang.serving.loading import (
    REPORTED_ARGS,
    geometry_numbers,
    load,
    model_summary,
    pools_payload,
    sizing_payload,
)

if TYPE_CHECKING:
    from hybridplan.hardware.catalog import GPU
    from hybridplan.evidence import EvidenceSource

_POOL_KEYS = ("max_mamba_cache_size", "kv_budget_bytes", "max_total_num_tokens", "max_running_requests",
              "binding_limit")


def explain(command: LaunchCommand | str, *, budget: float | PoolBudget | None = None, platform: Platform | None = None,
            version: str | None = None, gpu: GPU | None = None, available_gib: float | None = None,
            pre_load_gib: float | None = None, weights_gib: float | None = None, hub: bool = False,
            evidence: EvidenceSource | None = None) -> dict[str, Any]:
    """The full `explain --json` object. `budget` is a GiB float or a PoolBudget; None leaves pool figures null.
    A refusal after resolution comes back under `error`, beside the resolved `args` and the numbers still computable.

    With a `gpu` (hardware.catalog.GPU) or a boot log's `available_gib`/`pre_load_gib`, the budget comes from the
    memory timeline (weights, the --mem-fraction-static slack, the multimodal reservation) and `memory` shows it;
    `evidence` (the caller's measured launches, planner.evidence) gives the card's verdict its confidence.
    """
    if gpu is not None and platform is None:
        platform = gpu.platform()
    loaded = load(command, platform=platform, version=version)
    out: dict[str, Any] = {
        "engine": {"name": "sglang", "version": loaded.version},
        "command": loaded.command.text(),
        "env": dict(loaded.command.env),
        "model": model_summary(loaded.geometry, loaded.args),
    }
    if loaded.draft is not None:
        out["draft_model"] = {"source": loaded.draft.source, "architecture": loaded.draft.architecture,
                              "num_hidden_layers": loaded.draft.num_hidden_layers, "block_size": loaded.draft.block_size,
                              "notes": list(loaded.draft.notes)}
    out.update(geometry_numbers(loaded))
    warnings = list(loaded.args.notes)
    out["args"] = loaded.args.as_dict(REPORTED_ARGS)
    for key in _POOL_KEYS:
        out[key] = None
    if "error" in out:  # the pool configurator refuses the resolved arguments before any budget is sized
        out["pool_budget_gib"] = None
        out["warnings"] = warnings
        return out
    tl = None
    if budget is None and (gpu is not None or available_gib is not None or pre_load_gib is not None):
        from hybridplan.engine.sglang.serving.timeline import for_loaded, memory_payload

        tl, weights = for_loaded(loaded, gpu=gpu, available_gib=available_gib, pre_load_gib=pre_load_gib,
                                 weights_gib=weights_gib, hub=hub)
        from hybridplan.engine.sglang.serving.verdict import predict

        out["memory"] = memory_payload(tl, weights)
        points = evidence(NAME, gpu, loaded.version) if evidence is not None and gpu is not None else ()
        out["memory"]["verdict"] = predict(loaded, tl, request_tokens=1, gpu=gpu, evidence=points).as_dict()
        budget = tl.budget
        warnings += out["memory"]["warnings"]
    if budget is None:
        out["pool_budget_gib"] = None
        warnings.append("No pool budget: give --pool-budget-gib (the engine's total_rest_memory) or a GPU to size "
                        "the pools; S, D, state/slot and KV/token above do not depend on it.")
    else:
        try:
            out.update(pools_payload(tl.sizing(), loaded) if tl is not None else sizing_payload(loaded, budget))
        except EngineRefusal as exc:
            out["error"] = exc.as_dict()
        if "memory" in out and "allocated" in out:  # where the card's memory goes, as `plan` shows it
            from hybridplan.engine.sglang.serving.timeline import breakdown_of

            out["memory"]["breakdown"] = breakdown_of(out["memory"]["timeline"], out["allocated"])
        warnings += out.pop("sizing_warnings", [])
    out["warnings"] = warnings
    return out
