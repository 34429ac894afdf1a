"""A launch command loaded for one engine version (configs read, arguments resolved), and the engine-only parts of
the `explain` payload. The planner, cookbook, verify and web layers all start from here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, TypeVar

from hybridplan.engine.sglang.releases import for_version
from hybridplan.engine.sglang.args import EngineArgs
from hybridplan.hardware.platform import Platform
from hybridplan.engine.sglang.command import LaunchCommand, parse_command
from hybridplan.engine.sglang.types import PoolBudget, PoolSizing
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.models.geometry import DraftGeometry, ModelGeometry
from hybridplan.models.loader import load_draft, load_model, resolve_config
from hybridplan.provenance import Source, Sourced

_T = TypeVar("_T")

GIB = 1 << 30

# keys `args` always reports (engine field names), in this order
REPORTED_ARGS = (
    "model_path", "tp_size", "pp_size", "attn_dp_size", "attn_tp_size", "dcp_size", "mem_fraction_static",
    "max_running_requests", "max_total_tokens", "max_mamba_cache_size", "mamba_full_memory_ratio", "mamba_ssm_dtype",
    "mamba_ssm_dtype_resolved", "mamba_conv_dtype", "mamba_radix_cache_strategy", "uses_mamba_radix_cache",
    "disable_radix_cache", "disable_overlap_schedule", "page_size", "chunked_prefill_size", "context_length",
    "kv_cache_dtype", "kv_cache_torch_dtype", "model_dtype", "is_multimodal", "speculative_algorithm",
    "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens", "speculative_draft_model_path",
    "enable_linear_replayssm_spec", "linear_replayssm_cache_len", "attention_backend",
)


@dataclass(frozen=True, kw_only=True)
class Loaded:
    """A command with its models loaded and its arguments resolved for one engine version."""

    command: LaunchCommand
    geometry: ModelGeometry
    draft: DraftGeometry | None
    args: EngineArgs
    version: str


def model_refs(command: LaunchCommand, version: str | None) -> tuple[str, str | None]:
    """--model-path and --speculative-draft-model-path as typed (argparse errors surface here first); the web keys
    uploaded configs by them (hybridplan.model_sources)."""
    parsed = for_version(version).parse(command)
    return parsed.values["model_path"], parsed.values.get("speculative_draft_model_path")


def _dspark_subfolder(model_ref: str) -> DraftGeometry | None:
    """A DSpark draft shipped as the target checkpoint's `dspark/` subfolder (speculative_hook.py)."""
    try:
        src = resolve_config(model_ref)
    except BadInput:
        return None
    if src.checkpoint_dir is not None and (Path(src.checkpoint_dir) / "dspark" / "config.json").is_file():
        return load_draft(str(Path(src.checkpoint_dir) / "dspark"))
    return None


def load(command: LaunchCommand | str, *, platform: Platform | None = None, version: str | None = None) -> Loaded:
    """Parse, load the model (and draft) configs, and resolve the engine arguments."""
    cmd = parse_command(command) if isinstance(command, str) else command
    engine = for_version(version)
    model_ref, draft_ref = model_refs(cmd, engine.version)
    geo = load_model(model_ref)
    draft = load_draft(draft_ref) if draft_ref else None
    if draft is None and any(a.upper() == "DSPARK" for a in cmd.argv):
        draft = _dspark_subfolder(model_ref)
    args = engine.resolve(cmd, geo, draft, platform)
    return Loaded(command=cmd, geometry=geo, draft=draft, args=args, version=engine.version)


def model_summary(geo: ModelGeometry, args: EngineArgs) -> dict[str, Any]:
    """The geometry as the output shows it, per state-TP rank."""
    tp = for_version(args.version).state_tp(args, geo)
    shape = geo.state_shape(tp)
    return {
        "source": geo.source,
        "architecture": geo.architecture,
        "family": geo.family,
        "num_hidden_layers": geo.num_hidden_layers,
        "linear_layer_ids": list(geo.linear_layer_ids),
        "full_attention_layer_ids": list(geo.full_attention_layer_ids),
        "state_tp_size": tp,
        "conv_state_shape": [list(c) for c in shape.conv],
        "temporal_state_shape": list(shape.temporal),
        "kv": {"kind": geo.kv.kind, "total_kv_heads": geo.kv.total_kv_heads, "head_dim": geo.kv.head_dim,
               "kv_heads_per_rank": geo.kv.kv_heads_per_rank(args["attn_tp_size"], args["dcp_size"]),
               "kv_lora_rank": geo.kv.kv_lora_rank, "qk_rope_head_dim": geo.kv.qk_rope_head_dim},
        "kv_cache_quant_algo": geo.kv_cache_quant_algo,
        "quantization": geo.quant_method,
        "notes": list(geo.notes),
    }


def geometry_numbers(loaded: Loaded) -> dict[str, Any]:
    """Numbers that do not depend on the pool budget: S, D, state/slot, KV/token.

    The engine checks some resolved combinations only when its pool configurator runs (e.g. extra_buffer_lazy
    without the overlap schedule): a number it refuses to compute is None, and the refusal comes back as `error`.
    """
    engine = for_version(loaded.version)
    args, geo = loaded.args, loaded.geometry
    refusals: dict[str, EngineRefusal] = {}

    def computed(key: str, fn: Callable[[], _T]) -> _T | None:
        try:
            return fn()
        except EngineRefusal as exc:
            refusals[key] = exc
            return None

    def note(key: str, text: Callable[[], str]) -> str:
        return f"the engine refuses: {refusals[key].message}" if key in refusals else text()

    S = computed("slots_per_request", lambda: engine.slots_per_request(args))
    D = computed("draft_states_per_request", lambda: engine.draft_states_per_request(args, geo))
    tp = engine.state_tp(args, geo)
    per_slot = geo.state_bytes_per_slot(tp, args["mamba_ssm_dtype_resolved"], args["mamba_conv_dtype"])
    cell = computed("kv_bytes_per_token", lambda: engine.binding_cell(args, geo, loaded.draft))
    ring = engine.replayssm_ring_bytes(args, geo) if engine.replayssm_active(args, geo) else 0
    prov = {
        "slots_per_request": Sourced(value=S, source=Source.ENGINE_RULE, note=note(
            "slots_per_request", lambda: "mem_cache/kv_cache_configurator.py::_calculate_mamba_ratio")),
        "draft_states_per_request": Sourced(value=D, source=Source.ENGINE_RULE, note=note("draft_states_per_request", lambda: (
            "ReplaySSM spec-verify: no verify scratch" if engine.replayssm_active(args, geo) and args["speculative_algorithm"]
            else "speculative_num_draft_tokens" if D else "no speculative decoding"))),
        "state_bytes_per_slot": Sourced(value=per_slot, source=Source.ENGINE_RULE, note=(
            f"configs/mamba_utils.py::mamba_cache_per_req: {len(geo.linear_layer_ids)} layers x (conv "
            f"{geo.state_shape(tp).conv_numel} x {args['mamba_conv_dtype']} + ssm {geo.state_shape(tp).temporal_numel} x "
            f"{args['mamba_ssm_dtype_resolved']}) at state TP {tp}; from config")),
        "kv_bytes_per_token": Sourced(value=cell and cell.total, source=Source.ENGINE_RULE, note=note(
            "kv_bytes_per_token", lambda: "" if cell is None else (
                f"model_executor/pool_configurator.py::_compute_cell_size: {cell.layers} full-attention layers, "
                f"{cell.kv_dtype}; draft: {cell.draft_rule}"))),
        "replayssm_ring_bytes_per_request": Sourced(value=ring, source=Source.ENGINE_RULE, note=(
            f"configs/mamba_utils.py::replayssm_ring_bytes_per_req in sglang {loaded.version}'s layout; "
            f"kv_cache_configurator.py::_handle_max_mamba_cache charges it "
            + ("on every state slot" if engine.ring_charges(args, geo)[0] else "as a fixed mrr/dp + 1 reservation")
            if ring else "no ReplaySSM ring (--enable-linear-replayssm-spec off or not a linear-state model)")),
    }
    out = {
        "slots_per_request": S, "draft_states_per_request": D, "state_bytes_per_slot": per_slot,
        "kv_bytes_per_token": cell and cell.total, "kv_cell": cell and cell.as_dict(),
        "replayssm_ring_bytes_per_request": ring, "provenance": {k: v.as_dict() for k, v in prov.items()},
    }
    if refusals:
        out["error"] = next(iter(refusals.values())).as_dict()
    return out


def sizing_payload(loaded: Loaded, budget: PoolBudget | float) -> dict[str, Any]:
    """The `sizing` object for the engine's sizing of a budget; a refusal raises EngineRefusal."""
    engine = for_version(loaded.version)
    return pools_payload(engine.size_pools(budget, loaded.args, loaded.geometry, loaded.draft), loaded)


def pools_payload(s: PoolSizing, loaded: Loaded) -> dict[str, Any]:
    """The `sizing` object of `explain --json` for a pool sizing already computed (e.g. a timeline's)."""
    engine = for_version(loaded.version)
    alloc = engine.state_allocation(s, loaded.args, loaded.geometry)
    kv_alloc = engine.kv_bytes_allocated(s.max_total_num_tokens, loaded.args, loaded.geometry, s.cell.layers)
    return {
        "pool_budget_gib": s.state.rest_before_gib,
        "max_mamba_cache_size": s.max_mamba_cache_size,
        "mamba_pool_branch": s.state.branch,
        "state_pool_bytes": s.state.state_bytes,
        "spec_scratch_bytes": s.state.spec_scratch_bytes,
        "spec_scratch_rows": s.state.spec_rows,
        "kv_budget_bytes": s.kv_budget_bytes,
        "max_total_num_tokens": s.max_total_num_tokens,
        "max_running_requests": s.max_running_requests,
        "binding_limit": s.requests.binding,
        "limits": {"requested": s.requests.requested, "context_estimate": s.requests.estimated,
                   "kv_pool": s.requests.kv_cap, "state_pool": s.requests.state_cap},
        "allocated": {"conv_state_bytes": alloc.conv_bytes, "ssm_state_bytes": alloc.ssm_bytes,
                      "intermediate_ssm_bytes": alloc.intermediate_ssm_bytes,
                      "intermediate_conv_window_bytes": alloc.intermediate_conv_window_bytes,
                      "kv_bytes": kv_alloc},
        "log_lines": engine.predicted_lines(s, loaded.args, loaded.geometry),
        "sizing_warnings": list(s.warnings),
    }


def launch(command: str | tuple[str, ...], expand_home: bool = False) -> LaunchCommand:
    """The launch as typed (text or the shell's tokens); `expand_home`: a `~` word as the shell would have expanded
    it (the CLI's one quoted string; the web never expands)."""
    cmd = parse_command(command if isinstance(command, str) else list(command))
    if expand_home:
        from os.path import expanduser

        cmd = replace(cmd, argv=tuple(expanduser(a) if a == "~" or a.startswith("~/") else a for a in cmd.argv))
    return cmd
