"""The KV memory vLLM finds on a card, from the card alone (no boot log): its memory timeline, term by term.

v1/worker/gpu_worker.py::Worker.determine_available_memory: available = requested - non_kv_cache_memory - the CUDA
graph estimate, where requested = ceil(total x gpu_memory_utilization) (v1/worker/utils.py::request_memory) and
non_kv_cache_memory = total_consumed (weights as loaded + non-torch memory + persistent buffers) + the profile run's
transient activation peak (utils/mem_utils.py::memory_profiling). vLLM measures all but the first on the GPU; here
the weights come from the project's weight estimate (the one the SGLang timeline uses) and the rest are estimates
whose constants are data (data/vllm_memory.yaml), each fitted on a public boot log it names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hybridplan.hardware.catalog import GPU
from hybridplan.provenance import Source, Sourced

if TYPE_CHECKING:
    from hybridplan.models.geometry import ModelGeometry

GIB = 1 << 30
DATA_FILE = "vllm_memory.yaml"


@dataclass(frozen=True, kw_only=True)
class VllmMemory:
    """One rank's timeline to the available KV memory; every term in bytes with its source (available <= 0: the
    weights and runtime leave nothing for cache blocks, which vLLM refuses)."""

    total: Sourced
    requested: Sourced
    weights: Sourced
    overhead: Sourced
    activation: Sourced
    cudagraph: Sourced
    available: Sourced

    def as_dict(self) -> dict[str, Any]:
        """Each term in GiB (3 decimals) with its source and note."""
        out: dict[str, Any] = {}
        for name in ("total", "requested", "weights", "overhead", "activation", "cudagraph", "available"):
            s: Sourced = getattr(self, name)
            out[f"{name}_gib"] = Sourced(value=round(s.value / GIB, 3), source=s.source, note=s.note).as_dict()
        return out


@lru_cache(maxsize=1)
def _constants() -> dict[str, tuple[float, str]]:
    """name -> (value, note) from the data file (overhead as overhead_single / overhead_tensor_parallel)."""
    from hybridplan.packaged import data_yaml

    data = data_yaml(DATA_FILE) or {}
    flat = {"overhead_single": data["overhead_gib"]["single"],
            "overhead_tensor_parallel": data["overhead_gib"]["tensor_parallel"],
            "activation_copies": data["activation_copies"], "cudagraph_gib_per_graph": data["cudagraph_gib_per_graph"],
            "startup_used_gib": data["startup_used_gib"], "estimate_margin_gib": data["estimate_margin_gib"]}
    return {k: (float(v["value"]), " ".join(str(v["note"]).split())) for k, v in flat.items()}


def capture_sizes(max_num_seqs: int, num_speculative_tokens: int, max_num_batched_tokens: int, sm: int | None) -> int:
    """How many decode batch sizes vLLM captures by default (config/vllm.py::VllmConfig._set_cudagraph_sizes: the
    1, 2, 4, 8..248 by 8, 256.. by 16 grid up to min(max_num_seqs x query length x 2, 512 or 1024 on sm100,
    max_num_batched_tokens)); speculative tiers are counted as the plain grid (an estimate)."""
    ceiling = min(max_num_seqs * (1 + num_speculative_tokens) * 2, 1024 if sm is not None and sm // 10 == 10 else 512,
                  max_num_batched_tokens)
    grid = [n for n in (1, 2, 4) if n <= ceiling] + list(range(8, min(ceiling + 1, 256), 8)) + \
        list(range(256, ceiling + 1, 16))
    return len(set(grid + [ceiling]))


def _widths(model: str) -> tuple[int, int]:
    """(hidden, the MLP intermediate per token: gate + up; routed experts x top-k plus the shared one), whole model."""
    from hybridplan.models.loader import resolve_config
    from hybridplan.models.widths import widths_of

    w = widths_of(resolve_config(model).config)
    gate = 2 if w.gated_mlp else 1
    dense = gate * w.dense_intermediate
    moe = gate * (w.moe_topk * w.moe_intermediate + w.moe_shared_intermediate)
    return w.hidden, max(dense, moe)


def weights_per_rank(geo: "ModelGeometry", model: str, tp: int, quantization: str | None, mtp: bool) -> Sourced:
    """The weights vLLM loads on one rank: the project's weight estimate (weights/report.py::model_weights, as the
    SGLang timeline uses it) for the same checkpoint and tensor parallelism; an MTP drafter adds its own layers
    (vLLM shares the target's embedding and lm_head with it: model_executor/models/qwen3_5_mtp.py)."""
    from hybridplan.weights.inventory import Parallel, WeightsQuery
    from hybridplan.weights.report import model_weights

    q = WeightsQuery(model=model, quantization=quantization, multimodal=geo.is_multimodal,
                     parallel=Parallel(tp=tp, attn_tp=tp, kv_heads=geo.kv.total_kv_heads,
                                       num_layers=geo.num_hidden_layers),
                     stages=((0, geo.num_hidden_layers),), draft="mtp" if mtp else "none",
                     draft_label="MTP" if mtp else None, mtp_own_ends=False)
    w = model_weights(q, geo)
    draft = int(w.draft_per_rank.value)
    note = w.target_per_rank.note + (f"; + the MTP drafter's layers {draft / GIB:.2f} GiB" if draft else "")
    src = Source.ESTIMATE if Source.ESTIMATE in (w.target_per_rank.source, w.draft_per_rank.source) \
        else w.target_per_rank.source
    return Sourced(value=int(w.target_per_rank.value) + draft, source=src, note=note)


def from_card(args: Any, gpu: GPU, quantization: str | None) -> VllmMemory:
    """The available KV memory on `gpu` for resolved vLLM arguments (engine/vllm VllmArgs), term by term."""
    from hybridplan.hardware.catalog import visible_estimate

    c = _constants()
    vis = visible_estimate(gpu)
    total = int(vis.value * GIB)
    u = args.gpu_memory_utilization
    requested = math.ceil(total * u)
    tp = args.tensor_parallel_size
    from hybridplan.models.loader import load_model

    weights = weights_per_rank(load_model(args.model), args.model, tp, quantization, args.num_speculative_tokens > 0)
    over_key = "overhead_single" if tp == 1 else "overhead_tensor_parallel"
    overhead = int(c[over_key][0] * GIB)
    batched = args.max_num_batched_tokens or 8192
    seqs = args.max_num_seqs or 256
    width, mlp_all = _widths(args.model)
    mlp = mlp_all // tp
    act_bytes = int(c["activation_copies"][0] * batched * (width + mlp) * 2)
    graphs = capture_sizes(seqs, args.num_speculative_tokens, batched, gpu.sm)
    graph_bytes = int(graphs * c["cudagraph_gib_per_graph"][0] * GIB)
    available = requested - int(weights.value) - overhead - act_bytes - graph_bytes  # <= 0: no memory for blocks
    return VllmMemory(
        total=Sourced(value=total, source=vis.source, note=f"torch's total on {gpu.name} ({vis.note})"),
        requested=Sourced(value=requested, source=Source.ENGINE_RULE,
                          note=f"ceil(total x gpu_memory_utilization {u:g}) (v1/worker/utils.py::request_memory)"),
        weights=weights,
        overhead=Sourced(value=overhead, source=Source.ESTIMATE, note=c[over_key][1]),
        activation=Sourced(value=act_bytes, source=Source.ESTIMATE, note=(
            f"{c['activation_copies'][0]:g} x {batched} batched tokens x (hidden {width} + MLP {mlp} per rank) x 2 B: "
            + c["activation_copies"][1])),
        cudagraph=Sourced(value=graph_bytes, source=Source.ESTIMATE, note=(
            f"{graphs} captured sizes x {c['cudagraph_gib_per_graph'][0]:g} GiB: " + c["cudagraph_gib_per_graph"][1])),
        available=Sourced(value=available, source=Source.ESTIMATE, note=(
            "requested - weights - overhead - activation peak - CUDA graphs "
            "(v1/worker/gpu_worker.py::Worker.determine_available_memory)")),
    )


def free_at_startup(total_bytes: int, others: int = 0) -> Sourced:
    """What a worker finds free on the card when it starts (total less what its startup already holds and what other
    processes hold, `others` bytes): what v1/worker/utils.py::request_memory compares the requested share with. On a
    card sharing its memory with the host what the host holds comes off too, and is not known here."""
    used, note = _constants()["startup_used_gib"]
    held = f"; other processes hold {others / GIB:.2f} GiB" if others else ""
    return Sourced(value=int(total_bytes - used * GIB - others), source=Source.ESTIMATE, note=note + held)


@dataclass(frozen=True, kw_only=True)
class GrowthPoint:
    """One public boot's measure of what the host took from vLLM's KV memory during startup on a unified card."""

    label: str
    what: str  # what it measures, on which card ("taken by ... on a GB10")
    gib: float
    url: str
    note: str

    @property
    def link(self) -> str:
        """owner/repo#N for a GitHub issue or pull request, else the address."""
        parts = self.url.removeprefix("https://github.com/").split("/")
        return f"{parts[0]}/{parts[1]}#{parts[3]}" if self.url.startswith("https://github.com/") and len(parts) == 4 \
            else self.url

    def cite(self) -> str:
        return f"host growth {self.label} ({self.url})"


@dataclass(frozen=True, kw_only=True)
class HostGrowth:
    """What public boots on a card sharing its memory with the host lost to the host's growth during startup
    (data/vllm_memory.yaml unified_host_growth): the card-alone KV memory is an upper bound there."""

    points: tuple[GrowthPoint, ...]
    note: str

    @property
    def largest(self) -> GrowthPoint:
        return max(self.points, key=lambda p: p.gib)


@lru_cache(maxsize=1)
def host_growth() -> HostGrowth:
    """The host growth public boots on a unified card measured, each with its link."""
    from hybridplan.packaged import data_yaml

    data = (data_yaml(DATA_FILE) or {})["unified_host_growth"]
    return HostGrowth(note=" ".join(str(data["note"]).split()), points=tuple(
        GrowthPoint(label=str(m["label"]), what=str(m["what"]), gib=float(m["value_gib"]), url=str(m["url"]),
                    note=" ".join(str(m["note"]).split())) for m in data["measured"]))


def estimate_margin() -> tuple[float, str]:
    """(GiB, note): how far the card-alone available KV memory may be from a boot's (data/vllm_memory.yaml)."""
    return _constants()["estimate_margin_gib"]
