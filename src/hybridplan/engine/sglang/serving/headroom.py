"""What lives outside the state and KV pools once they are sized: a model-based estimate, part by part.

Buffer shapes the engine allocates are engine rules (attention workspaces, CUDA-graph index tables and logits
buffer, the req_to_token table, the multimodal reservation); activation working sets
are estimates from the model's widths x the tokens in flight (a prefill chunk, the decode graph's rows). Pool
memory beyond the budget (engine-semantics.md §3.7) is the pools' own, so the timeline adds it, not this. The
constants no engine rule gives come in as data (`planner.constants.PlannerConstants`). Pure over frozen inputs.

`engine_reserve` reports the engine's own default-mem-fraction reserve (an engine rule), which is deliberately conservative; it is
reported beside the estimate, never used for the fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from hybridplan.dtypes import itemsize
from hybridplan.engine.sglang.args import EngineArgs
from hybridplan.engine.sglang.releases import for_version
from hybridplan.hardware.catalog import GPU
from hybridplan.models.geometry import ModelGeometry
from hybridplan.engine.sglang.serving.constants import PlannerConstants
from hybridplan.models.widths import ModelWidths
from hybridplan.provenance import Source, Sourced
from hybridplan.engine.sglang.loads import EAGLE_FAMILY

MIB = 1 << 20
GIB = 1 << 30
FLA_CHUNK = 64  # kernels/ops/attention/fla/chunk.py::CHUNK_SIZE (GDN and KDA chunked prefill)
DISABLED = "disabled"
# flashinfer_backend.py::FlashInferAttnBackend.__init__: these architectures get a 512 MiB workspace, others 384 MiB
FLASHINFER_512_ARCHS = frozenset({"Qwen2ForCausalLM", "Qwen3ForCausalLM", "MiMoForCausalLM",
                                  "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration"})
DFLASH_FAMILY = ("DFLASH", "DSPARK")


@dataclass(frozen=True, kw_only=True)
class Part:
    """One piece of the headroom, in bytes, with its provenance."""

    name: str
    label: str
    nbytes: int
    source: Source
    note: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "gib": self.nbytes / GIB, "bytes": self.nbytes,
                "source": self.source.value, "note": self.note}


@dataclass(frozen=True, kw_only=True)
class Headroom:
    """The estimate: its parts and their sum."""

    parts: tuple[Part, ...]

    @property
    def total_bytes(self) -> int:
        return sum(p.nbytes for p in self.parts)

    @property
    def gib(self) -> float:
        return self.total_bytes / GIB

    def part(self, name: str) -> Part | None:
        return next((p for p in self.parts if p.name == name), None)

    def note(self) -> str:
        big = sorted((p for p in self.parts if p.nbytes > 0), key=lambda p: -p.nbytes)
        return "sum of " + ", ".join(f"{p.label} {p.nbytes / GIB:.2f}" for p in big) + " GiB"

    def as_list(self) -> list[dict[str, Any]]:
        return [p.as_dict() for p in self.parts]


# ---------------------------------------------------------------------------------------------- per-token widths


def _linear_bytes(geo: ModelGeometry, tp: int, ab: int, chunk: int, prefill: bool) -> int:
    """One linear-attention layer per token: in_proj and conv outputs, q/k/v, and in prefill the chunk kernels'
    temporaries (FLA chunk_gated_delta_rule: g, A [H x chunk], w, u, v_new, o, and the per-chunk states h)."""
    if not geo.linear_layer_ids:
        return 0
    shape = geo.state_shape(tp)
    conv = sum(max(c) for c in shape.conv)
    heads, a, b = shape.temporal
    value = heads * a
    in_proj = conv + value + 2 * heads
    if not prefill:
        return ab * (in_proj + conv + value)
    return ab * (in_proj + 2 * conv + 3 * value + heads * chunk + heads * a * b // chunk) + 4 * heads


def _attention_bytes(w: ModelWidths, attn_tp: int, ab: int, has_full_layers: bool) -> int:
    """One full-attention layer per token: projections, attention output and the gated output."""
    if not has_full_layers:
        return 0
    heads = math.ceil(w.attn_heads / attn_tp)
    if w.mla is not None:
        q_lora, kvr, nope, rope, v = w.mla
        return ab * (q_lora + kvr + rope + heads * (nope + rope) + heads * (nope + v) + 2 * heads * v)
    kv = max(1, w.attn_kv_heads // attn_tp)
    return ab * (heads * w.attn_head_dim * (w.attn_q_mult + 2) + 2 * kv * w.attn_head_dim)


def _mlp_bytes(w: ModelWidths, tp: int, ab: int) -> int:
    """The larger of a dense MLP and a MoE layer per token: gate/up output, activation output, routed copies."""
    proj = 3 if w.gated_mlp else 2
    dense = ab * proj * w.dense_intermediate // tp
    moe = 0
    if w.moe_experts:
        latent = 2 * w.hidden if w.moe_hidden != w.hidden else 0
        moe = ab * (w.moe_topk * (2 * w.moe_hidden + proj * w.moe_intermediate // tp)
                    + proj * w.moe_shared_intermediate // tp + latent) + 4 * w.moe_experts
    return max(dense, moe)


def per_token_bytes(args: EngineArgs, geo: ModelGeometry, w: ModelWidths, consts: PlannerConstants,
                    *, prefill: bool) -> int:
    """Peak live activation bytes per token of one forward: the residual stream plus the widest layer."""
    ab = itemsize(args["model_dtype"] or "bfloat16")
    chunk = FLA_CHUNK if (geo.is_gdn or geo.is_kda) else (geo.mamba_chunk_size or consts.mamba2_chunk_size)
    carried = 3 * w.hidden * ab  # residual, hidden states, normed copy
    widest = max(_attention_bytes(w, args["attn_tp_size"], ab, bool(geo.full_attention_layer_ids)),
                 _mlp_bytes(w, args["tp_size"], ab),
                 _linear_bytes(geo, for_version(args.version).state_tp(args, geo), ab, chunk, prefill))
    return carried + widest


# ---------------------------------------------------------------------------------------------- engine shapes


def decode_capture_sizes(max_bs: int, spec: bool) -> list[int]:
    """arg_groups/cuda_graph_hook.py::generate_decode_cuda_graph_batch_sizes (padding on)."""
    if spec:
        sizes = (list(range(1, 9)) + list(range(10, 33, 2)) + list(range(40, 65, 4)) + list(range(72, 257, 8))
                 + list(range(272, max_bs + 1, 16)))
    else:
        sizes = [1, 2, 4, 8, 12] + list(range(16, 257, 8)) + list(range(272, 512, 16)) + list(range(512, max_bs + 1, 32))
    sizes = [s for s in sizes if s <= max_bs]
    return sizes + ([max_bs] if max_bs not in sizes else [])


def attention_backend(args: EngineArgs) -> str | None:
    """The full-attention decode backend the resolution settled on (the flags, else the engine's default for the
    platform); None when the platform leaves it open (a card of unknown capability)."""
    backend = args["decode_attention_backend"] or args["attention_backend"]
    return None if backend is None else str(backend)


def attention_workspace(backend: str | None, geo: ModelGeometry, args: EngineArgs,
                        consts: PlannerConstants) -> tuple[int, Source, str]:
    """The attention backend's global workspace (one per process, shared by the draft's backend)."""
    env = args.env.get("SGLANG_FLASHINFER_WORKSPACE_SIZE")
    if backend == "flashinfer":
        if geo.architecture in FLASHINFER_512_ARCHS:
            return 512 * MIB, Source.ENGINE_RULE, "flashinfer workspace, 512 MiB for this architecture (flashinfer_backend.py)"
        size = int(env) if env else 384 * MIB
        return size, Source.ENGINE_RULE, "flashinfer workspace (SGLANG_FLASHINFER_WORKSPACE_SIZE, default 384 MiB)"
    if backend == "trtllm_mha":
        size = int(env) if env else 512 * MIB
        return size, Source.ENGINE_RULE, "trtllm_mha workspace (trtllm_mha_backend.py, default 512 MiB)"
    if backend is None:
        return int(consts.unknown_attention_workspace_mib * MIB), Source.ESTIMATE, consts.note(
            "unknown_attention_workspace_mib")
    return 0, Source.ENGINE_RULE, f"{backend}: no global workspace (its graph buffers are counted below)"


def req_to_token_bytes(args: EngineArgs, geo: ModelGeometry, rows: int) -> tuple[int, str]:
    """(max_running_requests + 1) x (context_len + extra) x int32 (mem_cache/memory_pool.py::ReqToTokenPool;
    extra from mem_cache/allocation_sizing.py::get_req_to_token_extra_context_len)."""
    ctx = args["context_length"] or geo.context_length
    algo = args["speculative_algorithm"]
    draft_tokens = args["speculative_num_draft_tokens"] or 0
    extra = 4 + (draft_tokens if algo else 0)
    page = args["page_size"] * max(1, args["dcp_size"])
    if algo is not None and page > 1:
        steps, topk = args["speculative_num_steps"] or 1, args["speculative_eagle_topk"] or 1
        if topk == 1:
            per_decode = max(steps * topk, draft_tokens)
        else:
            per_decode = max(((page - 1) + steps + page - 1) // page * page * topk, draft_tokens)
        extra = max(extra, 2 * per_decode + page - 1)
    return (rows + 1) * (ctx + extra) * 4, f"({rows} + 1) rows x ({ctx:,} + {extra}) tokens x int32"


def _index_table_bytes(backend: str | None, rows: int, max_bs: int, ctx: int, page: int) -> tuple[int, str]:
    """A decode graph's attention index table (init_cuda_graph_state of the backend)."""
    if backend in (None, "flashinfer"):
        return rows * ctx * 5, f"flashinfer kv_indices int32 + custom mask uint8: {rows} rows x {ctx:,}"
    if backend == "triton":
        return rows * ctx * 8, f"triton kv_indices int64: {rows} rows x {ctx:,}"
    pages = -(-ctx // page)
    return max_bs * pages * 4, f"{backend} page table int32: {max_bs} x {pages:,} pages"


# ---------------------------------------------------------------------------------------------- the estimate


def _decode_shape(args: EngineArgs, running: int) -> tuple[int, int]:
    """(max_bs, tokens per request) of the target's decode graph (0 rows when it is not captured). The captured
    sizes stop at the req_to_token rows (runner/base_cuda_graph_runner.py::get_batch_sizes_to_capture)."""
    if args["cuda_graph_decode_backend"] == DISABLED or args["disaggregation_mode"] == "prefill":
        return 0, 1
    spec = args["speculative_algorithm"] not in (None, "NGRAM")
    width = (args["speculative_num_draft_tokens"] or 1) if spec else 1  # TARGET_VERIFY captures the verify width
    return min(args["cuda_graph_decode_max_bs"] or 0, running), width


def _prefill_tokens(args: EngineArgs) -> int:
    if args["disaggregation_mode"] == "decode":
        return 0
    chunk = args["chunked_prefill_size"]
    return int(chunk if chunk and chunk > 0 else args["max_prefill_tokens"])


def _decode_buffers(args: EngineArgs, geo: ModelGeometry, widths: ModelWidths, backend: str | None, max_bs: int,
                    width: int) -> Part:
    """Decode-graph buffers: the attention index table, the shared logits buffer, EAGLE's multi-step draft tables."""
    rows, ctx, algo = max_bs * width, args["context_length"] or geo.context_length, args["speculative_algorithm"]
    if not rows:
        return Part(name="decode_graph_buffers", label="decode-graph buffers", nbytes=0, source=Source.ENGINE_RULE,
                    note="no decode graph")
    table, tnote = (_index_table_bytes(backend, rows, max_bs, ctx, args["page_size"])
                    if geo.full_attention_layer_ids else (0, "no full-attention layers"))
    nbytes, notes = table + rows * widths.vocab * 4, [tnote, f"logits fp32 {rows} x {widths.vocab:,}"]
    if algo in EAGLE_FAMILY and backend in (None, "flashinfer", "triton"):
        steps, topk = args["speculative_num_steps"] or 1, args["speculative_eagle_topk"] or 1
        nbytes += steps * max_bs * topk * ctx * 4
        notes.append(f"draft kv_indices {steps} steps x {max_bs} x {topk} x {ctx:,} int32")
    return Part(name="decode_graph_buffers", label="decode-graph buffers", nbytes=nbytes, source=Source.ENGINE_RULE,
                note="; ".join(notes) + " (attention init_cuda_graph_state, graph_shared_output.py)")


def _activation_parts(args: EngineArgs, geo: ModelGeometry, widths: ModelWidths, draft_widths: ModelWidths | None,
                      consts: PlannerConstants, running: int, max_bs: int, width: int) -> list[Part]:
    """The shared CUDA-graph pool (the largest captured working set), per-shape graph memory, the prefill graph's
    input buffer, eager forwards on top of the pool, and sampling."""
    ab = itemsize(args["model_dtype"] or "bfloat16")
    frag = 1 + consts.activation_fragmentation
    algo, rows, T = args["speculative_algorithm"], max_bs * width, _prefill_tokens(args)
    prefill_graph = args["cuda_graph_prefill_backend"] not in (None, DISABLED) and T > 0
    graph_tokens = min(T, args["cuda_graph_prefill_max_bs"] or 0) if prefill_graph else 0
    n_aux = max(1, draft_widths.aux_layers if draft_widths is not None else 1)
    aux = 0
    if algo in EAGLE_FAMILY:
        aux = widths.hidden * ab  # the target returns every position's hidden state to the draft
    elif algo in DFLASH_FAMILY:
        aux = n_aux * widths.hidden * ab  # ... or the hidden states of the target layers the draft reads
    pre = per_token_bytes(args, geo, widths, consts, prefill=True) + aux
    dec = per_token_bytes(args, geo, widths, consts, prefill=False)
    out = [Part(name="graph_pool", label="CUDA-graph pool (activations)", source=Source.ESTIMATE,
                nbytes=int(max(graph_tokens * pre, rows * dec) * frag),
                note=f"max(prefill {graph_tokens:,} tokens x {pre / 1024:.0f} KiB, decode {rows} rows x "
                     f"{dec / 1024:.0f} KiB) x {frag:.2f} for fragmentation: per-token widths from config.json; one "
                     "graph memory pool is shared by every capture (runner_utils/pool.py)")]
    shapes = (len(args["cuda_graph_prefill_bs"] or ()) if prefill_graph else 0) + \
        (len(decode_capture_sizes(max_bs, algo is not None)) if rows else 0)
    out.append(Part(name="graph_shapes", label="CUDA-graph shapes", source=Source.ESTIMATE,
                    nbytes=int(shapes * consts.graph_shape_mib * MIB),
                    note=f"{shapes} captured shapes x {consts.graph_shape_mib:g} MiB ({consts.note('graph_shape_mib')})"))
    embeds = graph_tokens * widths.hidden * ab if (prefill_graph and args["is_multimodal"]) else 0
    out.append(Part(name="prefill_graph_buffers", label="prefill-graph input buffers", nbytes=embeds,
                    source=Source.ENGINE_RULE, note=(
                        f"multimodal input_embeds {graph_tokens:,} x {widths.hidden} (prefill_cuda_graph_runner.py "
                        "PrefillInputBuffers)" if embeds else "no multimodal input buffer")))
    eager_prefill = T * pre if T > graph_tokens else 0  # a batch above the largest bucket runs eagerly
    eager_decode = 0 if rows else running * width * dec
    draft_extend, dnote = 0, ""
    if algo in DFLASH_FAMILY:  # the DFlash/DSpark draft runs its context pass eagerly (no draft prefill graph)
        d = draft_widths or widths
        # the target layers' hidden states it reads, its own residual stream and its widest layer (its MLP)
        widest = max(_attention_bytes(d, args["attn_tp_size"], ab, True), _mlp_bytes(d, args["tp_size"], ab))
        per = ab * n_aux * widths.hidden + 3 * d.hidden * ab + widest
        draft_extend, dnote = T * per, f"; {algo} draft extend {T:,} tokens x {per / 1024:.0f} KiB"
    out.append(Part(name="eager_activations", label="eager activations", source=Source.ESTIMATE,
                    nbytes=int((max(eager_prefill, eager_decode) + draft_extend) * frag),
                    note=(f"prefill {T:,} tokens, above the largest captured bucket" if eager_prefill else
                          f"decode {running * width} rows without a graph" if eager_decode else
                          "none outside the graph pool") + dnote))
    # decode rows keep their logits in the graph's shared buffer; a prefill samples one row per request
    prefill_rows = min(running, T) if T else 0
    sampled = max(rows * (consts.sampling_copies - 1), prefill_rows * consts.sampling_copies)
    out.append(Part(name="sampling", label="sampling", nbytes=int(sampled * widths.vocab * 4), source=Source.ESTIMATE,
                    note=f"max(decode {rows} rows x {consts.sampling_copies - 1:g}, prefill {prefill_rows} rows x "
                         f"{consts.sampling_copies:g}) x {widths.vocab:,} vocab x fp32 ({consts.note('sampling_copies')})"))
    return out


def estimate(args: EngineArgs, geo: ModelGeometry, widths: ModelWidths, *, draft_widths: ModelWidths | None,
             running: int, mm_gib: float, consts: PlannerConstants, gpu: GPU | None = None) -> Headroom:
    """Memory outside the pools at steady state: workspaces, tables, CUDA graphs, activations, the VLM cache.
    `running` is the resolved max_running_requests (the req_to_token rows); `gpu`, on unified memory, adds what
    the host needs of the slack (`host_parts`). The attention backend is the resolved one (resolve `args` on the card's platform)."""
    backend = attention_backend(args)
    ws, ws_src, ws_note = attention_workspace(backend, geo, args, consts)
    r2t, r2t_note = req_to_token_bytes(args, geo, running)
    max_bs, width = _decode_shape(args, running)
    world = args["tp_size"] * args["pp_size"]
    parts = [
        Part(name="attention_workspace", label="attention workspace", nbytes=ws, source=ws_src, note=ws_note),
        Part(name="cublas_workspace", label="cuBLAS workspaces", nbytes=int(consts.cublas_workspace_mib * MIB),
             source=Source.ESTIMATE, note=consts.note("cublas_workspace_mib")),
        Part(name="req_to_token", label="req_to_token table", nbytes=r2t, source=Source.ENGINE_RULE, note=r2t_note),
        _decode_buffers(args, geo, widths, backend, max_bs, width),
        *_activation_parts(args, geo, widths, draft_widths, consts, running, max_bs, width),
        Part(name="multimodal_cache", label="multimodal cache", nbytes=int(mm_gib * GIB), source=Source.ENGINE_RULE,
             note="mm_runtime_reservation_gb (reserved for it out of the pool budget)" if mm_gib else "not multimodal"),
        Part(name="block_draft_runner", label="block draft runner", source=Source.ESTIMATE,
             nbytes=int(consts.block_draft_runner_gib * GIB) if args["speculative_algorithm"] in DFLASH_FAMILY else 0,
             note=consts.note("block_draft_runner_gib") if args["speculative_algorithm"] in DFLASH_FAMILY
             else "no block draft"),
        Part(name="nccl", label="NCCL buffers", nbytes=int(consts.nccl_mib_per_rank * world * MIB) if world > 1 else 0,
             source=Source.ESTIMATE, note=consts.note("nccl_mib_per_rank") if world > 1 else "one rank: no NCCL"),
    ]
    if gpu is not None and gpu.unified:
        parts.extend(host_parts(gpu.memory_bytes, consts))
    if consts.headroom_offset_gib:
        parts.append(Part(name="calibration_offset", label="calibration offset", source=Source.ESTIMATE,
                          nbytes=int(consts.headroom_offset_gib * GIB), note=consts.note("headroom_offset_gib")))
    return Headroom(parts=tuple(parts))


def host_parts(total_bytes: int, consts: PlannerConstants) -> list[Part]:
    """What a unified-memory host (of `total_bytes`, its MemTotal) needs of the slack beyond the engine's own allocations. The engine reads the host's
    available memory as the device's (utils/common.py::get_available_gpu_memory), so what the host holds at the
    baseline is already out of P. What the server's host processes add later comes out of the same pool, and where the
    host swaps (the stock host: no guard above the kernel's OOM killer) it goes to swap; on a host whose guard acts on
    available memory (`unified_oom_reserve_fraction` > 0, e.g. earlyoom) it stays, and the guard's share stays free."""
    guard = consts.unified_oom_reserve_fraction
    if guard <= 0:
        return []
    return [Part(name="host_reserve", label="host out-of-memory guard", source=Source.ESTIMATE,
                 nbytes=int(guard * total_bytes), note=consts.note("unified_oom_reserve_fraction")),
            Part(name="host_runtime", label="server host processes", source=Source.ESTIMATE,
                 nbytes=int(consts.unified_runtime_host_gib * GIB), note=consts.note("unified_runtime_host_gib"))]


def engine_reserve(args: EngineArgs, geo: ModelGeometry, version: str | None = None) -> Sourced:
    """The engine's own default-mem-fraction reserve (GiB), reported beside the estimate, never used for the fit."""
    mib, note = for_version(version).default_fraction_reserve_mib(args, geo)
    return Sourced(value=mib / 1024, source=Source.ENGINE_RULE, note=note)
