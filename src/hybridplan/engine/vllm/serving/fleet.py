"""`fleet` on vLLM: every layout vLLM runs a model in on a card, each server sized for sessions of L tokens.

The layouts are vLLM's: TP on one node or across nodes (`--nnodes`, `--node-rank`, `--master-addr`; the nodes past the
first run `--headless`), and data-parallel replicas inside one server (`--data-parallel-size`: each replica an engine
core with its own TP group and its own paged pool). A server's capacity is the most sessions of L tokens its pool
holds at `--max-model-len L` (vLLM's `Maximum concurrency`, floored, per engine core) under `max_num_seqs`, from the
card-alone memory estimate (serving/memory.py) at the highest `--gpu-memory-utilization` the evidence rule allows
(serving/plan.py::no_evidence_ceiling, within MAX_UTIL_PROPOSED). Pipeline parallelism is listed but not sized:
hybridplan's vLLM model has no per-stage KV grouping (v1/core/kv_cache_utils.py's groups and blocks per worker).
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from typing import Any

from hybridplan.engine.fleet_requests import LEADER_ADDRESS, FleetLayout, FleetRequest, FleetRole
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.limits import MAX_UTIL_PROPOSED

PROGRAM = ("vllm", "serve")
MAX_NODES = 4
DEFAULT_UTIL = 0.92  # config/cache.py::CacheConfig.gpu_memory_utilization
UTIL_STEP = 0.01


@dataclass(frozen=True)
class Shape:
    """One vLLM server: `dp` engine cores of TP `tp` (x PP `pp`), over `nodes` nodes."""

    tp: int
    dp: int = 1
    pp: int = 1
    nodes: int = 1

    @property
    def gpus(self) -> int:
        return self.tp * self.dp * self.pp

    @property
    def words(self) -> str:
        text = f"TP{self.tp}" + (f" PP{self.pp}" if self.pp > 1 else "") + (f" x DP{self.dp}" if self.dp > 1 else "")
        return text + (f" ({self.nodes} nodes)" if self.nodes > 1 else "")

    def flags(self, node_rank: int = 0) -> tuple[str, ...]:
        """The flags that lay the server out (node `node_rank`'s)."""
        out: tuple[str, ...] = ("--tensor-parallel-size", str(self.tp))
        if self.pp > 1:
            out += ("--pipeline-parallel-size", str(self.pp))
        if self.dp > 1:
            out += ("--data-parallel-size", str(self.dp))
        if self.nodes > 1:
            out += ("--nnodes", str(self.nodes), "--node-rank", str(node_rank), "--master-addr", LEADER_ADDRESS)
            out += ("--headless",) if node_rank > 0 else ()
        return out


def shapes(per_node: int, most: int) -> list[Shape]:
    """TP within a node and across 2 or 4 nodes, DP replicas of a smaller TP filling a node, and TP x PP."""
    inside = [g for g in (2 ** i for i in range(11)) if g <= min(per_node, most)]
    out = [Shape(tp=g) for g in inside]
    out += [Shape(tp=t, dp=g // t) for g in inside for t in inside if t < g and g % t == 0]
    out += [Shape(tp=per_node * n, nodes=n) for n in (2, MAX_NODES) if per_node * n <= most]
    out += [Shape(tp=per_node, pp=n, nodes=n) for n in (2, MAX_NODES) if per_node * n <= most]
    return out


@dataclass(frozen=True, kw_only=True)
class Sized:
    """One engine core of a shape at one utilization: the pool's plan, or why there is none."""

    capacity: int  # sessions of L one engine core holds (0: none)
    kv_tokens: int = 0
    binding: str = ""
    why: str = ""
    util: float = DEFAULT_UTIL
    max_num_seqs: int | None = None
    graph_max: int | None = None  # the largest decode batch captured as a CUDA graph


def ceiling() -> float:
    """The highest --gpu-memory-utilization a launch is given without a measured boot."""
    from hybridplan.engine.vllm.serving.plan import no_evidence_ceiling

    return min(no_evidence_ceiling(DEFAULT_UTIL), MAX_UTIL_PROPOSED)


def core(text: str, req: FleetRequest, version: str, util: float) -> Sized:
    """One engine core of the launch `text` at `--max-model-len L` and utilization `util` on the card."""
    from hybridplan.engine.vllm.engine import for_version
    from hybridplan.engine.vllm.serving.memory import from_card
    from hybridplan.engine.vllm.serving.launch import card, resolve_on
    from hybridplan.hardware.catalog import from_options
    from hybridplan.models.loader import load_model

    engine = for_version(version)
    cmd = engine.parse_command(f"{text} --max-model-len {req.request_length} --gpu-memory-utilization {util:g}")
    geo = load_model(req.model)
    gpu = from_options(req.gpu, None)
    assert gpu is not None  # layouts() checked the card
    try:
        args = resolve_on(engine, cmd, geo, card(req.gpu))
        quant = cmd.values.get("quantization")
        memory = from_card(args, gpu, None if quant is None else str(quant))
        plan = engine.plan(args, geo, int(memory.available.value))
    except BadInput as exc:
        return Sized(capacity=0, binding="weights" if "weights" in exc.message else "memory", why=exc.message,
                     util=util)
    except EngineRefusal as exc:
        return Sized(capacity=0, binding="KV", why=exc.message, util=util)
    pool = math.floor(plan.max_concurrency)
    seqs = args.max_num_seqs
    capacity = pool if seqs is None else min(pool, seqs)
    bound = "max_num_seqs" if seqs is not None and seqs < pool else "KV"
    why = (f"max_num_seqs {seqs} caps an engine core below the {pool} sessions its pool holds" if bound == "max_num_seqs"
           else f"{plan.num_blocks:,} blocks of {plan.block_size} tokens hold {plan.max_concurrency:.2f} sessions of "
                f"{req.request_length:,} tokens ({plan.kv_cache_tokens:,} KV tokens)")
    return Sized(capacity=capacity, kv_tokens=plan.kv_cache_tokens, binding=bound, why=why, util=util,
                 max_num_seqs=seqs, graph_max=_graph_max(args, gpu.sm))


def _graph_max(args: Any, sm: int | None) -> int:
    """The largest decode batch vLLM captures (config/vllm.py::VllmConfig._set_cudagraph_sizes: min(max_num_seqs x
    query length x 2, 512 or 1024 on sm100, max_num_batched_tokens); serving/memory.py counts the same grid)."""
    seqs = args.max_num_seqs or 256
    return int(min(seqs * (1 + args.num_speculative_tokens) * 2, 1024 if sm is not None and sm // 10 == 10 else 512,
                   args.max_num_batched_tokens or 8192))


def launch_text(shape: Shape, model: str, node_rank: int = 0) -> str:
    return shlex.join(PROGRAM + (model,) + shape.flags(node_rank))


def layouts(req: FleetRequest, version: str) -> list[FleetLayout]:
    """Every TP, multi-node TP and DP layout sized; PP layouts listed as not modelled; a model the engine refuses is
    one row that says so."""
    from hybridplan.hardware.catalog import from_options

    if from_options(req.gpu, None) is None:
        raise BadInput("fleet needs --gpu (a catalog card)")
    most = min(req.gpus_available or MAX_NODES * req.gpus_per_node, MAX_NODES * req.gpus_per_node)
    refused = _refusal(req, version)
    if refused is not None:
        return [FleetLayout(engine="vllm", version=version, name="any layout", refusal=refused)]
    out = []
    top = ceiling()
    cores: dict[tuple[int, int], Sized] = {}  # (tp, nodes) -> one engine core: DP replicas repeat it
    for sh in shapes(req.gpus_per_node, most):
        if sh.pp > 1:
            out.append(FleetLayout(engine="vllm", version=version, name=sh.words, refusal=(
                "not modelled: hybridplan's vLLM model has no per-stage KV grouping for pipeline parallelism "
                "(v1/core/kv_cache_utils.py sizes each stage's groups and takes the fewest blocks)")))
            continue
        key = (sh.tp, sh.nodes)
        if key not in cores:
            cores[key] = core(launch_text(Shape(tp=sh.tp, nodes=sh.nodes), req.model), req, version, top)
        s = cores[key]
        if sh.dp > 1 and s.capacity == 0:  # replicas of a TP group that holds nothing: its own row says why
            continue
        r = FleetRole(role="server", scales=True, count=1, gpus=sh.gpus, nodes=sh.nodes, parallel=sh.words,
                      capacity=s.capacity * sh.dp, kv_tokens=s.kv_tokens * sh.dp, state_slots=None,
                      binding=s.binding, why=s.why, launch=PROGRAM + (req.model,) + sh.flags())
        refusal = None if s.capacity else f"server {sh.words}: {s.why}"
        out.append(FleetLayout(engine="vllm", version=version, name=sh.words, roles=(r,), refusal=refusal,
                               confidence=None if refusal else "estimate", limits=() if refusal else _limits(sh, s),
                               notes=() if refusal else (
                                   f"sized at --gpu-memory-utilization {s.util:g}: the card-alone estimate "
                                   "(explain --engine vllm --gpu shows its terms); one boot's logged KV memory "
                                   "replaces it (plan --engine vllm --kv-memory-gib)",)))
    return out


def _refusal(req: FleetRequest, version: str) -> str | None:
    """Why the engine cannot run the model at all (its own words), or None."""
    from hybridplan.engine.vllm.engine import for_version
    from hybridplan.models.loader import load_model

    engine = for_version(version)
    geo = load_model(req.model)  # an unknown model is the user's error, not a refusal
    try:
        engine.resolve(engine.parse_command(shlex.join(PROGRAM + (req.model,))), geo, 90, None)
    except (EngineRefusal, BadInput) as exc:  # the engine model refuses an architecture by name as BadInput
        return exc.message
    return None


def _limits(sh: Shape, s: Sized) -> tuple[str, ...]:
    """Where a layout that fits in memory is likely to meet a limit the model does not know."""
    out = []
    if sh.nodes > 1:
        out.append(f"TP{sh.tp} spans {sh.nodes} nodes: every layer's all-reduce crosses the inter-node network "
                   "(its bandwidth is not modelled)")
    if sh.dp > 1:
        out.append(f"DP{sh.dp}: each replica holds its own pool ({s.capacity} sessions each); one API server spreads "
                   "the sessions, and an uneven spread fills one replica first")
    if s.graph_max is not None and s.capacity > s.graph_max:
        out.append(f"at {s.capacity} sessions an engine core decodes above the {s.graph_max} its CUDA graphs capture: "
                   "those steps run eagerly, so compute is likely to bind before memory")
    return tuple(out)
