"""vLLM launches as evidence (hybridplan.evidence): the facts a public launch and a command are compared on, read by
vLLM's own parser and resolution on the card. The memory fraction is --gpu-memory-utilization (the share of the
card's total vLLM requests, v1/worker/utils.py::request_memory), the prefill chunk max_num_batched_tokens, the request
cap max_num_seqs; MATCH are the resolved arguments that make a launch "this command" (the verdict is then measured)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from hybridplan.engine.vllm.engine import NAME
from hybridplan.evidence import EvidencePoint, Probe

if TYPE_CHECKING:
    from hybridplan.engine.vllm.command import VllmCommand
    from hybridplan.engine.vllm.planning import VllmArgs
    from hybridplan.hardware.catalog import GPU

# what else must be equal for a launch to be this command (card, release and utilization are compared by evidence.py)
MATCH = ("model", "tensor_parallel_size", "kv_cache_dtype", "max_model_len", "auto_fit", "max_num_seqs",
         "max_num_batched_tokens", "enable_prefix_caching", "mamba_cache_mode", "mamba_ssm_cache_dtype",
         "num_speculative_tokens", "cudagraph_mode", "block_size", "kv_cache_memory_bytes")


def _model(cmd: VllmCommand, args: VllmArgs) -> str:
    """The checkpoint a launch's memory follows: the model, its online quantization, its speculative tokens."""
    quant = cmd.values.get("quantization")
    parts = [args.model] + ([f"--quantization {quant}"] if quant else [])
    parts += [f"{args.num_speculative_tokens} speculative tokens"] if args.num_speculative_tokens else []
    return " + ".join(parts)


def _match(cmd: VllmCommand, args: VllmArgs) -> dict[str, Any]:
    return {"quantization": cmd.values.get("quantization"), **{k: getattr(args, k) for k in MATCH}}


def probe(cmd: VllmCommand, args: VllmArgs, gpu: GPU, version: str) -> Probe:
    """A resolved launch on a catalog card, as evidence.py compares it with measured launches."""
    return Probe(gpu=gpu, model=_model(cmd, args), mem_fraction_static=args.gpu_memory_utilization,
                 fraction_flag="--gpu-memory-utilization",
                 chunked_prefill_size=args.max_num_batched_tokens, concurrency=args.max_num_seqs or 1,
                 cuda_graph_max_bs=None, tp=args.tensor_parallel_size, version=version, args=_match(cmd, args))


def launch_point(version: str, command: str, gpu_id: str, *, kind: str, label: str, source: str,
                 outcome: Literal["served", "failed"], phase: str | None) -> EvidencePoint:
    """A public launch of release `version` on the card as an evidence point (BadInput or EngineRefusal when vLLM's
    parser or resolution refuses it: such a launch is no evidence)."""
    from hybridplan.engine.vllm.engine import for_version
    from hybridplan.engine.vllm.serving.launch import card, resolve_on
    from hybridplan.hardware.catalog import lookup
    from hybridplan.models.loader import load_model

    gpu = lookup(gpu_id)
    engine = for_version(version)
    cmd = engine.parse_command(command)
    args = resolve_on(engine, cmd, load_model(str(cmd.values.get("model"))), card(gpu_id))
    p = probe(cmd, args, gpu, engine.version)
    return EvidencePoint(engine=NAME, kind=kind, label=label, source=source, gpu=gpu.id, model=p.model,
                         outcome=outcome, phase=phase, mem_fraction_static=p.mem_fraction_static,
                         chunked_prefill_size=p.chunked_prefill_size, max_running_requests=args.max_num_seqs,
                         tp=p.tp, build=version, version=engine.version, args=p.args)
