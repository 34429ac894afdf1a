"""sglang 0.5.23 pool sizing for hybrid models: S, D, the state pool, the KV cell, T and max running requests.

Pure functions over frozen inputs; each mirrors the engine function named in its docstring
(mem_cache/kv_cache_configurator.py unless stated).
"""

from __future__ import annotations

import math

from hybridplan.engine.sglang.args import EngineArgs
from hybridplan.engine.sglang.behaviours import Switches
from hybridplan.engine.sglang import archs
from hybridplan.engine.sglang.kv_dtype import draft_kv_dtype
from hybridplan.engine.sglang.types import KVCell, PoolBudget, PoolSizing, RequestCap, StatePlan
from hybridplan.errors import EngineRefusal
from hybridplan.models.geometry import DraftGeometry, ModelGeometry, StateTP

GIB = 1 << 30
KVC = "mem_cache/kv_cache_configurator.py"
POOL = "model_executor/pool_configurator.py"


# ---------------------------------------------------------------------------------------------- S and D


def mamba_ratio(args: EngineArgs) -> int:
    """S, state slots per running request (KVCacheConfigurator._calculate_mamba_ratio)."""
    if args["disable_radix_cache"]:
        return 1
    skip = args.env_bool("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK")
    base = 3 - (1 if skip else 0)
    strategy = args["mamba_radix_cache_strategy"]
    # before 0.5.21 an explicit extra_buffer on an arch outside the radix lists stays set and counts
    # (arg_groups/model_override_base.py::mamba_extra_buffer_of has no arch gate)
    gated = args.get("uses_mamba_radix_cache", False) or not args.switches.extra_buffer_on_stateless_arch_refused
    extra = gated and strategy in ("extra_buffer", "extra_buffer_lazy")
    if extra:
        lazy = strategy == "extra_buffer_lazy"
        if args["disable_overlap_schedule"] and lazy:
            raise EngineRefusal("Lazy extra buffer requires overlap schedule (--disable-overlap-schedule is incompatible)",
                                rule=f"{KVC}::_calculate_mamba_ratio", kind="AssertionError")
        # mem_cache/allocation_sizing.py::get_mamba_tracking_slots
        return base + (1 if lazy else (1 if args["disable_overlap_schedule"] else 2))
    return base + (1 if skip else 0)


def spec_on(args: EngineArgs) -> bool:
    return args["speculative_algorithm"] is not None


def replayssm_active(args: EngineArgs, geo: ModelGeometry) -> bool:
    """ReplaySSM spec-verify replaces the verify scratch, for GDN and KDA models only."""
    return bool(args["enable_linear_replayssm_spec"]) and (geo.is_gdn or geo.is_kda)


def replayssm_ring_bytes(args: EngineArgs, geo: ModelGeometry, record_len: int | None = None) -> int:
    """One request's ReplaySSM ring over all state layers (_handle_max_mamba_cache's record_len and
    configs/mamba_utils.py::replayssm_ring_bytes_per_req). Before 0.5.20 a non-KDA ring is speculative_num_draft_tokens
    long (max_speculative_num_draft_tokens; the adaptive maximum is not modelled) in the raw layout."""
    sw = args.switches
    if record_len is None:
        record_len = args["linear_replayssm_cache_len"]
        if not geo.is_kda and sw.replayssm_gdn_ring_length == "max_draft_tokens" and args["speculative_num_draft_tokens"]:
            record_len = args["speculative_num_draft_tokens"]
    return geo.replayssm_ring_bytes(state_tp(args, geo), record_len, args["mamba_conv_dtype"],
                                    compact=sw.replayssm_gdn_ring_layout == "compact")


def pd_prefill_skips_spec_state(args: EngineArgs, device: str = "cuda") -> bool:
    """_pd_prefill_skips_mamba_spec_state (from 0.5.22): a PD prefill server keeps no verify snapshots."""
    return (args.switches.pd_prefill_skips_spec_state and args["disaggregation_mode"] == "prefill"
            and not args.get("enable_pd_role_switch", False)
            and not args["enable_unified_memory"] and device != "npu")


def reserves_spec_state(args: EngineArgs, geo: ModelGeometry) -> bool:
    """Whether the state pool reserves D verify states per request (spec on, no ReplaySSM, not PD prefill)."""
    return spec_on(args) and not replayssm_active(args, geo) and not pd_prefill_skips_spec_state(args)


def draft_states_per_request(args: EngineArgs, geo: ModelGeometry) -> int:
    """D as the state pool reserves it: speculative_num_draft_tokens, or 0 when nothing is reserved."""
    return int(args["speculative_num_draft_tokens"]) if reserves_spec_state(args, geo) else 0


# ---------------------------------------------------------------------------------------------- geometry per rank


def state_tp(args: EngineArgs, geo: ModelGeometry) -> int:
    """The TP width that shards the state (configs/*.py mamba2_cache_params; runtime_context.py)."""
    if geo.state_tp is StateTP.TP:
        return int(args["tp_size"])
    if geo.state_tp is StateTP.LINEAR_ATTN_TP and args.get("enable_cp_tp_group_sharing"):
        return int(args["tp_size"])
    return int(args["attn_tp_size"])


def pp_indices(num_layers: int, rank: int, pp: int, partition: str | None) -> tuple[int, int]:
    """distributed/utils.py::get_pp_indices: even split, the last `num_layers % pp` ranks take one more (O(1) per rank,
    so a stage loop stays O(pp))."""
    if partition:
        sizes = [int(x) for x in partition.split(",")]
        if len(sizes) != pp or sum(sizes) != num_layers:
            raise EngineRefusal(f"SGLANG_PP_LAYER_PARTITION={partition} does not split {num_layers} layers over {pp} ranks",
                                rule="distributed/utils.py::get_pp_indices")
        start = sum(sizes[:rank])
        return start, start + sizes[rank]
    base, extra = divmod(num_layers, pp)
    first_long = pp - extra  # ranks from here on hold base + 1 layers
    start = rank * base + max(0, rank - first_long)
    return start, start + base + (1 if rank >= first_long else 0)


def pp_stages(args: EngineArgs, geo: ModelGeometry) -> list[tuple[int, int]]:
    pp = args["pp_size"]
    part = args.env.get("SGLANG_PP_LAYER_PARTITION")
    return [pp_indices(geo.num_hidden_layers, r, pp, part) for r in range(pp)]


def pp_layer_scale(args: EngineArgs, geo: ModelGeometry) -> float:
    """The largest stage's share of the state layers (_handle_max_mamba_cache)."""
    layers = geo.linear_layer_ids
    if args["pp_size"] <= 1 or not layers:
        return len(layers) / max(len(layers), 1)
    biggest = max(sum(1 for i in layers if s <= i < e) for s, e in pp_stages(args, geo))
    return biggest / max(len(layers), 1)


def eagle_draft_layers(args: EngineArgs, geo: ModelGeometry, draft: DraftGeometry | None) -> tuple[int | None, str]:
    """eagle_draft_num_layers (spec_aux_hidden_state.py::_resolve_eagle_aux_hidden_state)."""
    if args["speculative_draft_model_path"] is None and not args.switches.pathless_mtp_draft_kv:
        return None, "path-less MTP before 0.5.20: no draft config is read, so no draft KV is priced"
    if args["speculative_draft_model_path"] is None or draft is None:
        n = geo.num_nextn_predict_layers
        if n is None:
            return None, "path-less MTP: the target config has no num_nextn_predict_layers, so no draft KV is priced"
        return n, "path-less MTP: the target config's num_nextn_predict_layers"
    if draft.architecture in archs.DRAFT_MODE_ONE_NEXTN_LAYER:
        return 1, f"draft-mode {draft.architecture}: num_nextn_predict_layers = 1"
    if draft.num_nextn_predict_layers is not None:
        return draft.num_nextn_predict_layers, "draft config num_nextn_predict_layers"
    return max(draft.num_hidden_layers, draft.num_attention_layers), "draft config num_hidden_layers"


def fp4_cell_bytes(recipe: str, n_kv: int, head_dim: int, layers: int, prefill_backend: str, decode_backend: str,
                   sm100: bool) -> int:
    """FP4 KV bytes per token (layers/quantization/fp4_kv_cache_quant_method.py: NVFP4KVCacheMethod and
    FP4MXBlock16KVCacheMethod.compute_cell_size). Scale layouts and the dequant workspace follow the
    attention backends' access rules (KV_CACHE_ATTENTION_ACCESS_REGISTRY); kv_size is 1 (float4_e2m1fn_x2)."""
    data = n_kv * (head_dim // 2) * layers * 2
    if recipe == "fp4_mx_block16":
        return data + (n_kv * head_dim // 16) * layers * 2  # plain access: no dequant workspace
    dq = prefill_backend == "flashinfer"  # DEQUANT_WORKSPACE access, fp8 workspace
    native = "trtllm_mha" in (prefill_backend, decode_backend)  # NATIVE_FP4 access
    layouts = int(dq or (native and not sm100)) + int(native and sm100)
    one_layout = n_kv * (head_dim // 16) * layers * 2
    return data + one_layout * layouts + (n_kv * head_dim * 2 if dq else 0)


def kv_cell(args: EngineArgs, geo: ModelGeometry, draft: DraftGeometry | None, *, stage: int = 0) -> KVCell:
    """DefaultPoolConfigurator.__init__ / _compute_cell_size for a hybrid target, with the draft's KV folded in."""
    from hybridplan.dtypes import itemsize

    start, end = pp_indices(geo.num_hidden_layers, stage, args["pp_size"], args.env.get("SGLANG_PP_LAYER_PARTITION"))
    layers = sum(1 for i in geo.full_attention_layer_ids if start <= i < end)
    attn_tp, dcp = args["attn_tp_size"], args["dcp_size"]
    kv_dtype = args["kv_cache_torch_dtype"]
    if kv_dtype == "float4_e2m1fn_x2":
        if geo.kv.kind == "mla":
            base = (geo.kv.kv_lora_rank + geo.kv.qk_rope_head_dim) * layers
            cell = base // 2 + ((geo.kv.kv_lora_rank + geo.kv.qk_rope_head_dim) // 16) * layers
        else:
            backend = args["attention_backend"] or "flashinfer"
            cell = fp4_cell_bytes(args["kv_cache_dtype"], geo.kv.kv_heads_per_rank(attn_tp, dcp), geo.kv.head_dim,
                                  layers, args["prefill_attention_backend"] or backend,
                                  args["decode_attention_backend"] or backend, args.get("platform_sm100", False))
    else:
        cell = geo.kv.cell_bytes(layers=layers, attn_tp=attn_tp, kv_dtype=kv_dtype, dcp=dcp,
                                 mxfp8=args["kv_cache_dtype"] == "mxfp8")
    algo = args["speculative_algorithm"]
    draft_bytes, rule, ddtype = 0, "no speculative draft", None
    if algo in ("EAGLE", "EAGLE3", "STANDALONE", "FROZEN_KV_MTP"):
        n, why = eagle_draft_layers(args, geo, draft)
        if n is not None and n > 0 and layers > 0:
            draft_bytes = int(cell * n / layers)
            rule = f"{POOL}::DefaultPoolConfigurator.__init__: + int(C x {n} / {layers}) ({why})"
        else:
            rule = f"{POOL}::DefaultPoolConfigurator.__init__: no draft KV priced ({why})"
    elif algo in ("DFLASH", "DSPARK") and draft is not None:
        if algo == "DSPARK":
            require_markov(args.switches, draft)
        ddtype, dwhy = draft_kv_dtype(args["kv_cache_dtype"], args["speculative_draft_kv_cache_dtype"],
                                      _draft_model_dtype(draft), args["speculative_draft_attention_backend"],
                                      "cuda")
        # draft attn TP (speculative/draft_parallel.py), no DCP; the whole TP before 0.5.22
        n_kv = draft.kv.kv_heads_per_rank(attn_tp if args.switches.dflash_draft_kv_per_attn_tp_rank else args["tp_size"])
        per_token = n_kv * (draft.kv.head_dim + draft.kv.v_head_dim) * draft.num_hidden_layers * itemsize(ddtype)
        if per_token > 0 and layers > 0:
            draft_bytes = per_token * dcp
            rule = (f"mem_cache/draft_kv_budget.py::resolve_dflash_draft_cell_size: {n_kv} KV heads x "
                    f"({draft.kv.head_dim}+{draft.kv.v_head_dim}) x {draft.num_hidden_layers} layers x "
                    f"{itemsize(ddtype)} B ({dwhy})" + (f" x dcp {dcp}" if dcp > 1 else ""))
    elif algo in ("NGRAM", "UNO"):
        rule = f"{algo} adds no draft KV"
    return KVCell(target=cell, draft=draft_bytes, total=cell + draft_bytes, layers=layers, kv_dtype=kv_dtype,
                  draft_rule=rule, draft_dtype=ddtype)


def require_markov(sw: Switches, draft: DraftGeometry) -> None:
    """spec_aux_hidden_state.py::_resolve_dflash_aux_hidden_state: a DSpark draft needs markov_rank > 0, read from
    dspark_config only before 0.5.23 (the published drafts nest it under dflash_config)."""
    rank = draft.markov_rank if sw.dspark_markov_rank_in_dflash_config else draft.markov_rank_dspark_config_only
    if rank <= 0:
        raise EngineRefusal(f"DSPARK requires markov_rank > 0 in the draft config, got markov_rank={rank}.",
                            rule="model_executor/model_runner_components/spec_aux_hidden_state.py::"
                                 "_resolve_dflash_aux_hidden_state", kind="ValueError")


def binding_cell(args: EngineArgs, geo: ModelGeometry, draft: DraftGeometry | None) -> KVCell:
    """The KV cell that bounds T: under PP each stage divides its own budget and the MIN of T wins, so the
    stage with the largest cell binds (config_from_budget / _apply_token_constraints)."""
    cells = [kv_cell(args, geo, draft, stage=s) for s in range(args["pp_size"])]
    return max(cells, key=lambda c: c.total)


def _draft_model_dtype(draft: DraftGeometry) -> str:
    from hybridplan.dtypes import model_dtype

    return model_dtype(draft.config_dtype, "auto", draft.model_type)


# ---------------------------------------------------------------------------------------------- the state pool


def stage_per_req(args: EngineArgs, geo: ModelGeometry) -> int:
    """stage_per_req: one slot's state bytes on the largest PP stage (_handle_max_mamba_cache)."""
    per_req = geo.state_bytes_per_slot(state_tp(args, geo), args["mamba_ssm_dtype_resolved"], args["mamba_conv_dtype"])
    return int(per_req * pp_layer_scale(args, geo))


def mrr_per_worker(mrr: int, args: EngineArgs) -> int:
    """--max-running-requests per attention-DP worker: max(1, mrr // dp) from 0.5.23, mrr // dp before."""
    per = mrr // int(args["attn_dp_size"])
    return max(1, per) if args.switches.mrr_per_dp_floor_one else per


def ring_is_fixed(args: EngineArgs, geo: ModelGeometry) -> bool:
    """From 0.5.20 a non-KDA ring is a fixed reservation of mrr/dp + 1 rings; before, every state slot carries one
    (_handle_max_mamba_cache)."""
    return not geo.is_kda and args.switches.replayssm_ring == "fixed"


def stage_ring(args: EngineArgs, geo: ModelGeometry) -> int:
    """One request's ReplaySSM ring on the largest pipeline stage; 0 without ReplaySSM."""
    return int(replayssm_ring_bytes(args, geo) * pp_layer_scale(args, geo)) if replayssm_active(args, geo) else 0


def ring_charges(args: EngineArgs, geo: ModelGeometry, ring: int | None = None) -> tuple[int, int]:
    """(bytes added to every state slot, bytes reserved once) for the ReplaySSM ring on the largest stage
    (_handle_max_mamba_cache; `ring`: stage_ring when the caller has it); (0, 0) without ReplaySSM. The fixed part
    needs --max-running-requests (0 without)."""
    ring = stage_ring(args, geo) if ring is None else ring
    if not ring_is_fixed(args, geo):
        return ring, 0
    mrr = args["max_running_requests"]
    return 0, (ring * (mrr_per_worker(mrr, args) + 1) if mrr is not None else 0)


def handle_max_mamba_cache(rest_gib: float, args: EngineArgs, geo: ModelGeometry, S: int) -> StatePlan:
    """KVCacheConfigurator._handle_max_mamba_cache: fix K and subtract the state (and verify scratch) memory."""
    stage = stage_per_req(args, geo)
    dp = args["attn_dp_size"]
    mrr = args["max_running_requests"]
    ring = stage_ring(args, geo)
    if replayssm_active(args, geo) and ring_is_fixed(args, geo) and mrr is None:
        raise EngineRefusal("unsupported operand type(s) for //: 'NoneType' and 'int' "
                            "(--enable-linear-replayssm-spec on a GDN model sizes its ring by --max-running-requests)",
                            rule=f"{KVC}::_handle_max_mamba_cache", kind="TypeError")
    extra, fixed = ring_charges(args, geo, ring)
    reserves = reserves_spec_state(args, geo)
    D = args["speculative_num_draft_tokens"]
    if spec_on(args) and (D is None or mrr is None):
        raise EngineRefusal("assert get_schedule().max_running_requests is not None"
                            if mrr is None else "assert get_spec().speculative_num_draft_tokens is not None",
                            rule=f"{KVC}::_handle_max_mamba_cache", kind="AssertionError")
    rest = rest_gib
    spec_rows = 0
    scratch = 0
    ratio = budget_bytes = None
    if args["max_mamba_cache_size"] is not None:
        branch = "max_mamba_cache_size"
        K = args["max_mamba_cache_size"] // dp
        if reserves:
            spec_rows = min(mrr_per_worker(mrr, args), K // S) + 1
            scratch = stage * spec_rows * D
            rest = rest - (scratch / GIB)
    elif args["disable_radix_cache"] and mrr is not None:
        branch = "max_running_requests"
        K = mrr_per_worker(mrr, args)
        if reserves:
            spec_rows = K + 1
            scratch = stage * spec_rows * D
            rest = rest - (scratch / GIB)
    else:
        branch = "ratio"
        if stage <= 0:
            raise EngineRefusal("assert stage_per_req > 0", rule=f"{KVC}::_handle_max_mamba_cache", kind="AssertionError")
        ratio = args["mamba_full_memory_ratio"]
        budget = rest * ratio / (1 + ratio)
        budget_bytes = budget * (1 << 30)
        if reserves:
            K = int((budget_bytes - stage * (1 + D) - extra) // (stage * (1 + D / S) + extra))
            spec_rows = min(mrr_per_worker(mrr, args), K // S) + 1
            scratch = stage * spec_rows * D
            rest = rest - (scratch / GIB)
        else:
            per_slot = stage + extra
            K = int((budget_bytes - fixed - per_slot) // per_slot)
    if K <= 0:
        raise EngineRefusal(
            "Not enough GPU memory for hybrid (mamba/linear-attention) state cache. "
            f"Computed max_mamba_cache_size={K} (total_rest_memory={rest:.2f} GB, "
            f"mamba_cache_per_req={stage / (1 << 20):.2f} MB). Try: (1) reduce --max-running-requests, "
            "(2) increase --mem-fraction-static, (3) reduce --speculative-num-draft-tokens, or "
            "(4) use GPUs with more memory.", rule=f"{KVC}::_handle_max_mamba_cache", kind="RuntimeError")
    state_bytes = (K + 1) * (stage + extra) + fixed
    return StatePlan(
        max_mamba_cache_size=K, branch=branch, per_slot=stage, extra_per_slot=extra, replayssm_fixed=fixed,
        replayssm_ring_per_req=ring, spec_rows=spec_rows, spec_scratch_bytes=scratch, state_bytes=state_bytes,
        rest_before_gib=rest_gib, kv_budget_gib=rest - state_bytes / (1 << 30), ratio=ratio,
        state_budget_bytes=budget_bytes,
    )


# ---------------------------------------------------------------------------------------------- T and requests


def tokens_from_budget(budget_bytes: int, cell: int, args: EngineArgs, geo: ModelGeometry,
                       stage_cells: list[int] | None = None) -> tuple[int, list[str]]:
    """T = budget // C, page-floored, user cap, MIN over PP stages (config_from_budget, calculate_pool_sizes)."""
    notes: list[str] = []
    page = args["page_size"]
    cells = stage_cells if stage_cells is not None else [cell]
    per_stage = []
    for c in cells:
        if c:
            t = max(budget_bytes, 0) // c
        elif geo.full_attention_layer_ids and args["pp_size"] > 1:
            t = 2**63 - 1  # KV lives on another stage; the MIN decides
        else:
            t = args["max_total_tokens"] or args["context_length"]
        per_stage.append(t // page * page)
    T = min(per_stage)
    cap = args["max_total_tokens"]
    if cap is not None:
        if cap > T:
            notes.append(f"max_total_tokens={cap} is larger than the profiled value {T}. Use the profiled value instead.")
        T = min(T, cap) // page * page
    return T, notes


def resolve_max_num_reqs(T: int, K: int, S: int, args: EngineArgs) -> RequestCap:
    """KVCacheConfigurator.resolve_max_num_reqs for a mambaish model."""
    estimated = max(min(int(T / args["context_length"] * 512), 4096), 2048)
    mrr = args["max_running_requests"]
    warnings: list[str] = []
    if mrr is not None:
        requested = mrr_per_worker(mrr, args)
        n = min(requested, T // 2)
        binding = "max_running_requests" if requested <= T // 2 else "kv_pool"
    else:
        requested = None
        n = min(estimated, T // 2)
        binding = "context_estimate" if estimated <= T // 2 else "kv_pool"
    cap = K // S
    capped_by_mamba = False
    if cap < n:
        capped_by_mamba = True
        binding = "state_pool"
        warnings.append(f"max_running_requests is capped to {cap} by the mamba state cache (max_mamba_cache_size={K}, "
                        f"{S} state slots per request). To raise it: increase --mamba-full-memory-ratio or "
                        "--max-mamba-cache-size, or halve the state size with --mamba-ssm-dtype bfloat16.")
    n = min(n, cap)
    if n <= 0:
        raise EngineRefusal(
            "Hybrid (mamba/linear-attention) state cache is too small to serve any requests. "
            f"max_mamba_cache_size={K}, mamba_ratio={S}, resulting max_num_reqs={n}. Try: (1) reduce "
            "--max-running-requests, (2) increase --mem-fraction-static, or (3) use GPUs with more memory.",
            rule=f"{KVC}::resolve_max_num_reqs", kind="RuntimeError")
    if requested is not None and n < requested and not capped_by_mamba:
        warnings.append(f"max_running_requests was reduced from the requested {requested} to {n} (per dp worker) due "
                        "to the available KV cache capacity.")
    return RequestCap(max_running_requests=n, requested=requested, estimated=estimated, kv_cap=T // 2,
                      state_cap=cap, binding=binding, warnings=tuple(warnings))


# ---------------------------------------------------------------------------------------------- the pipeline


def no_kv_memory_refusal(budget: PoolBudget, mfs: float | None) -> EngineRefusal:
    """The ValueError of _profile_available_bytes when nothing is left for KV (m = 1 - A/P ignores the state)."""
    msg = f"Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={mfs}. "
    if budget.available_gib is not None and budget.pre_load_gib:
        m = 1 - budget.available_gib / budget.pre_load_gib
        msg += (f"Raise --mem-fraction-static above {math.ceil(m * 1000) / 1000:.3f} (minimum viable = 1 - "
                f"available/pre = {m:.4f}). ")
    else:
        msg += "Raise --mem-fraction-static above <1 - available/pre> (needs the GPU profile). "
    msg += "If using speculative decoding, draft weights are now counted."
    return EngineRefusal(msg, rule=f"{KVC}::_profile_available_bytes", kind="ValueError")


def size_pools(budget: PoolBudget | float, args: EngineArgs, geo: ModelGeometry,
               draft: DraftGeometry | None = None) -> PoolSizing:
    """Run _handle_max_mamba_cache, config_from_budget and resolve_max_num_reqs on a pool budget.

    The budget is the engine's `total_rest_memory` (GiB): free memory after weights, minus the
    --mem-fraction-static slack and the multimodal reservation.
    """
    if not isinstance(budget, PoolBudget):
        budget = PoolBudget(rest_gib=float(budget))
    S = mamba_ratio(args)
    state = handle_max_mamba_cache(budget.rest_gib, args, geo, S)
    kv_budget_gib = state.kv_budget_gib
    if kv_budget_gib <= 0:
        raise no_kv_memory_refusal(budget, args["mem_fraction_static"])
    budget_bytes = int(kv_budget_gib * (1 << 30))
    cells = [kv_cell(args, geo, draft, stage=s) for s in range(args["pp_size"])]
    cell = binding_cell(args, geo, draft)
    T, notes = tokens_from_budget(budget_bytes, cell.total, args, geo, [c.total for c in cells])
    if T <= 0:
        raise EngineRefusal("Not enough memory. Please try to increase --mem-fraction-static."
                            + (f" Current value: mem_fraction_static={args['mem_fraction_static']}"
                               if args["mem_fraction_static"] is not None else ""),
                            rule=f"{POOL}::MemoryPoolConfig.__post_init__", kind="RuntimeError")
    req = resolve_max_num_reqs(T, state.max_mamba_cache_size, S, args)
    req_pool_guards(args, geo)
    per_req = geo.state_bytes_per_slot(state_tp(args, geo), args["mamba_ssm_dtype_resolved"], args["mamba_conv_dtype"])
    return PoolSizing(
        slots_per_request=S, draft_states_per_request=draft_states_per_request(args, geo), state_bytes_per_slot=per_req,
        cell=cell, state=state, max_total_num_tokens=T, requests=req, kv_budget_bytes=budget_bytes,
        engine_version=args.version, warnings=tuple(notes) + req.warnings,
    )


def req_pool_guards(args: EngineArgs, geo: ModelGeometry) -> None:
    """KVCacheConfigurator._build_hybrid_req_pool's check before it allocates (after sizing): DSPARK/DFLASH ReplaySSM
    commits through the KDA fold, so a non-KDA model is refused (kimi_linear_config before 0.5.21)."""
    algo = (args["speculative_algorithm"] or "").upper()
    if args["enable_linear_replayssm_spec"] and algo in ("DSPARK", "DFLASH") and not geo.is_kda:
        kda = "KDA model" if args.switches.hybrid_kda_config else "KDA (kimi_linear) model"
        raise EngineRefusal(f"--enable-linear-replayssm-spec with DSPARK/DFLASH requires a {kda}; got a non-KDA model.",
                            rule=f"{KVC}::_build_hybrid_req_pool")


def kv_bytes_allocated(T: int, args: EngineArgs, geo: ModelGeometry, layers: int) -> int:
    """Bytes the KV pool allocates: (T + page) rows per layer (memory_pool.py MHA/MLA pools; v_dim = head_dim)."""
    from hybridplan.dtypes import itemsize

    rows: int = T + args["page_size"]
    size = itemsize(args["kv_cache_torch_dtype"])
    if geo.kv.kind == "mla":
        return layers * rows * (geo.kv.kv_lora_rank + geo.kv.qk_rope_head_dim) * size
    n = geo.kv.kv_heads_per_rank(args["attn_tp_size"], args["dcp_size"])
    return 2 * layers * rows * n * geo.kv.head_dim * size

