"""The boot-log lines sglang 0.5.23 prints about its pools, predicted from a sizing (mem_cache/memory_pool.py et al.)."""

from __future__ import annotations

from hybridplan.dtypes import itemsize, torch_name
from hybridplan.engine.sglang.args import EngineArgs
from hybridplan.engine.sglang.sizing import GIB, kv_bytes_allocated, pp_stages, state_tp
from hybridplan.engine.sglang.types import PoolSizing, StateAllocation
from hybridplan.models.geometry import ModelGeometry


def state_allocation(s: PoolSizing, args: EngineArgs, geo: ModelGeometry) -> StateAllocation:
    """MambaPool.__init__ on stage 0: K+1 rows of state; spec scratch over max_running_requests+1 rows."""
    start, end = pp_stages(args, geo)[0]
    layers = sum(1 for i in geo.linear_layer_ids if start <= i < end)
    shape = geo.state_shape(state_tp(args, geo))
    conv_b = itemsize(args["mamba_conv_dtype"])
    ssm_b = itemsize(args["mamba_ssm_dtype_resolved"])
    rows = s.max_mamba_cache_size + 1
    conv = layers * rows * shape.conv_numel * conv_b
    ssm = layers * rows * shape.temporal_numel * ssm_b
    spec = args["speculative_algorithm"] is not None and args["disaggregation_mode"] != "prefill"
    if not spec:
        return StateAllocation(conv_bytes=conv, ssm_bytes=ssm, intermediate_ssm_bytes=None,
                               intermediate_conv_window_bytes=None)
    d_max = args["speculative_num_draft_tokens"]
    spec_rows = s.max_running_requests + 1
    inter_ssm = 0 if args["enable_linear_replayssm_spec"] and (geo.is_gdn or geo.is_kda) else \
        layers * spec_rows * d_max * shape.temporal_numel * ssm_b
    topk = args["speculative_eagle_topk"]
    dedup = shape.conv_window_dedup and (topk is None or topk <= 1) and not geo.is_kda
    window = 0
    for conv_shape in shape.conv:
        if dedup:
            dim, win = conv_shape
            window += layers * spec_rows * dim * (d_max + win - 1) * conv_b
        else:
            n = 1
            for d in conv_shape:
                n *= d
            window += layers * spec_rows * d_max * n * conv_b
    return StateAllocation(conv_bytes=conv, ssm_bytes=ssm, intermediate_ssm_bytes=inter_ssm,
                           intermediate_conv_window_bytes=window)


def predicted_lines(s: PoolSizing, args: EngineArgs, geo: ModelGeometry) -> list[str]:
    """The lines a user should find in rank 0's boot log (values in the engine's 'GB', i.e. GiB)."""
    a = state_allocation(s, args, geo)
    mamba = (f"Mamba Cache is allocated. max_mamba_cache_size: {s.max_mamba_cache_size}, "
             f"conv_state size: {a.conv_bytes / GIB:.2f}GB, ssm_state size: {a.ssm_bytes / GIB:.2f}GB ")
    if a.intermediate_ssm_bytes is not None and a.intermediate_conv_window_bytes is not None:
        mamba += (f"intermediate_ssm_state_cache size: {a.intermediate_ssm_bytes / GIB:.2f}GB "
                  f"intermediate_conv_window_cache size: {a.intermediate_conv_window_bytes / GIB:.2f}GB ")
    T = s.max_total_num_tokens
    kv_bytes = kv_bytes_allocated(T, args, geo, s.cell.layers)
    dtype = torch_name(args["kv_cache_torch_dtype"])
    if geo.kv.kind == "mla":
        kv = f"KV Cache is allocated. dtype: {dtype}, #tokens: {T}, KV size: {kv_bytes / GIB:.2f} GB"
    else:
        kv = (f"KV Cache is allocated. dtype: {dtype}, #tokens: {T}, K size: {kv_bytes / 2 / GIB:.2f} GB, "
              f"V size: {kv_bytes / 2 / GIB:.2f} GB")
    lines = [mamba, kv]
    lines += [w for w in s.requests.warnings if w.startswith("max_running_requests")]
    lines.append(f"max_total_num_tokens={T * max(1, args['dcp_size'])}, "
                 f"chunked_prefill_size={args['chunked_prefill_size']}, "
                 f"max_prefill_tokens={args['max_prefill_tokens']}, max_running_requests={s.max_running_requests}, "
                 f"context_len={args['context_length']}, available_gpu_mem=<measured>")
    return lines
