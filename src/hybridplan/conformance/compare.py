"""Field-by-field comparison of the engine's results with hybridplan's, naming the hybridplan rule that drifted."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable

from hybridplan.engine.api import for_version

from hybridplan.conformance.oracle_schema import SECTIONS, OracleError, Result

if TYPE_CHECKING:
    from hybridplan.conformance.scenarios import Scenario

E = for_version().rules_package  # the modelled release's rules, as conformance reports name them
M = "hybridplan.models"

# field (section.name, or a section prefix) -> the hybridplan rule that computes it
RULES: dict[str, str] = {
    "resolved.mamba_radix_cache_strategy": f"{E}.resolve._radix",
    "resolved.disable_overlap_schedule": f"{E}.resolve._radix / _pp_overlap",
    "resolved.disable_radix_cache": f"{E}.resolve (argparse)",
    "resolved.speculative_algorithm": f"{E}.speculative.resolve_speculative",
    "resolved.speculative_num_draft_tokens": f"{E}.speculative.resolve_speculative",
    "resolved.speculative_num_steps": f"{E}.speculative.resolve_speculative",
    "resolved.speculative_eagle_topk": f"{E}.speculative.resolve_speculative",
    "resolved.max_running_requests": f"{E}.speculative._default_mrr",
    "resolved.page_size": f"{E}.resolve._page_size",
    "resolved.mamba_ssm_dtype": f"{E}.resolve._linear_attn",
    "resolved.kv_cache_dtype": f"{E}.resolve (argparse)",
    "resolved.chunked_prefill_size": f"{E}.memory_defaults.apply_memory_defaults",
    "resolved.max_mamba_cache_size": f"{E}.resolve (argparse)",
    "resolved.mamba_full_memory_ratio": f"{E}.resolve (argparse)",
    "resolved.mem_fraction_static": f"{E}.memory_defaults.apply_memory_defaults",
    "resolved": f"{E}.resolve._parallel",
    "geometry.conv": f"{M}.geometry.<Mixer>.shape",
    "geometry.temporal": f"{M}.geometry.<Mixer>.shape",
    "geometry.linear_layer_ids": f"{M}.families (layer pattern)",
    "geometry.full_attention_layer_ids": f"{M}.families (layer pattern)",
    "geometry.mamba_cache_per_req": f"{M}.geometry.ModelGeometry.state_bytes_per_slot",
    "geometry.replayssm_ring_bytes_per_req": f"{M}.geometry.ModelGeometry.replayssm_ring_bytes",
    "geometry.conv_dtype": f"{E}.resolve._state_dtypes",
    "geometry.ssm_dtype": f"{E}.resolve._state_dtypes",
    "geometry.context_len": f"{M}.config_json.context_length",
    "geometry.dtype": "hybridplan.dtypes.model_dtype",
    "geometry.num_nextn_predict_layers": f"{M}.families (num_nextn_predict_layers)",
    "geometry.is_multimodal": f"{E}.resolve._model",
    "geometry.quantization": f"{M}.quant.quant_info (engine_method)",
    "kv.kv_torch_dtype": f"{E}.kv_dtype.target_kv_dtype",
    "kv.target_cells": f"{E}.sizing.kv_cell (target)",
    "kv.cells": f"{E}.sizing.kv_cell (draft KV)",
    "kv.post_capture_kv_active": f"{E}.budget.pool_budget (post-capture slack floor)",
    "sizing.S": f"{E}.sizing.mamba_ratio",
    "sizing.K": f"{E}.sizing.handle_max_mamba_cache",
    "sizing.branch": f"{E}.sizing.handle_max_mamba_cache",
    "sizing.kv_budget_bytes": f"{E}.sizing.handle_max_mamba_cache / budget.pool_budget",
    "sizing.max_total_num_tokens": f"{E}.sizing.tokens_from_budget",
    "sizing.max_running_requests": f"{E}.sizing.resolve_max_num_reqs",
    "error": "(the refusal)",
}


def rule_for(field: str) -> str:
    if field in RULES:
        return RULES[field]
    return RULES.get(field.split(".")[0], "?")


@dataclass(frozen=True, kw_only=True)
class Drift:
    """One field where hybridplan and the engine disagree."""

    scenario: str
    field: str
    engine: object
    hybridplan: object
    rule: str

    def as_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "field": self.field, "engine": self.engine, "hybridplan": self.hybridplan,
                "rule": self.rule}


def _error_drift(sid: str, eng: OracleError | None, mod: OracleError | None) -> list[Drift]:
    if eng is None and mod is None:
        return []
    if eng is None or mod is None:
        rule = (mod.get("rule") if mod is not None else None) or rule_for((eng or mod or {"stage": "?"})["stage"])
        return [Drift(scenario=sid, field="error", engine=eng, hybridplan=mod, rule=rule)]
    out: list[Drift] = []
    same_type = eng["type"] == mod["type"]
    # argparse errors are compared by kind only: the engine prints usage text, hybridplan one line
    same_message = eng["stage"] == "parse" or eng["message"] == mod["message"]
    if not (same_type and same_message):
        out.append(Drift(scenario=sid, field="error", engine={"type": eng["type"], "message": eng["message"]},
                         hybridplan={"type": mod["type"], "message": mod["message"]}, rule=mod.get("rule") or "?"))
    return out


def compare(engine: Result, model: Result) -> list[Drift]:
    """Every field the engine reported that hybridplan disagrees on (fields hybridplan does not hold are skipped)."""
    sid = engine.get("id", "?")
    drifts = _error_drift(sid, engine.get("error"), model.get("error"))
    for section in SECTIONS:
        eng, mod = engine.get(section), model.get(section)
        if eng is None or mod is None:
            continue
        for name, value in eng.items():
            field = f"{section}.{name}"
            if name not in mod:
                continue
            if mod[name] != value:
                drifts.append(Drift(scenario=sid, field=field, engine=value, hybridplan=mod[name], rule=rule_for(field)))
    return drifts


def outcome(result: Result) -> str:
    """How a scenario ended on the engine side: the _handle_max_mamba_cache branch, or the refusal."""
    err = result.get("error")
    if err:
        return f"refused:{err['stage']}:{err['type']}"
    sizing = result.get("sizing")
    if sizing:
        return f"branch:{sizing['branch']}"
    return "no-budget"


def tally(scenarios: Iterable[Scenario], engine: dict[str, Result], families: dict[str, str]) -> dict[str, Counter[str]]:
    """Counters per family, per engine outcome (branch or refusal), per sampled tag, and the scenarios whose
    --mem-fraction-static the engine defaulted, by GPU, attention DP and multimodality."""
    out: dict[str, Counter[str]] = {"family": Counter(), "outcome": Counter(), "tag": Counter(), "default_mfs": Counter()}
    for sc in scenarios:
        result = engine.get(sc.id) or {"id": sc.id, "error": {"stage": "missing", "type": "?", "message": ""}}
        out["family"][families.get(sc.model, "?")] += 1
        out["outcome"][outcome(result)] += 1
        for tag in sc.tags:
            out["tag"][tag] += 1
        if "mfs:default" in sc.tags and "resolved" in result:
            dp = "attn_dp" if "attn_dp" in sc.tags else "no_dp"
            out["default_mfs"][f"{sc.gpu_mib}:{dp}:{'vlm' if 'vlm' in sc.tags else 'text'}"] += 1
    return out
