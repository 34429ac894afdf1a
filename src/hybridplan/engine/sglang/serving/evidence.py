"""sglang launches as evidence (hybridplan.evidence): a public or recorded launch resolved by the release it ran on,
on its card, into the facts evidence.py compares (its checkpoint, --mem-fraction-static, prefill chunk, request and
CUDA-graph caps, TP, and the resolved arguments that make a launch "this command")."""

from __future__ import annotations

from typing import Literal

from hybridplan.engine.sglang.releases import NAME
from hybridplan.errors import BadInput
from hybridplan.evidence import EvidencePoint, match_args, model_key



def launch_point(version: str, command: str, gpu_id: str, *, kind: str, label: str, source: str,
                 outcome: Literal["served", "failed"], phase: str | None) -> EvidencePoint:
    """A launch of release `version` on the card as an evidence point (BadInput or EngineRefusal when the release's
    parser or resolution refuses it, or leaves the fraction to the card at startup: no evidence then)."""
    from hybridplan.engine.sglang.serving.loading import load
    from hybridplan.hardware.catalog import lookup

    gpu = lookup(gpu_id)
    args = load(command, platform=gpu.platform(), version=version).args
    if args["mem_fraction_static"] is None:
        raise BadInput(f"{label}: its --mem-fraction-static is decided at startup")
    return EvidencePoint(
        engine=NAME, kind=kind, label=label, source=source, gpu=gpu.id, model=model_key(args), outcome=outcome,
        phase=phase, mem_fraction_static=float(args["mem_fraction_static"]),
        chunked_prefill_size=args.get("chunked_prefill_size"), max_running_requests=args.get("max_running_requests"),
        cuda_graph_max_bs=args.get("cuda_graph_decode_max_bs"), tp=int(args.get("tp_size") or 1), build=version,
        version=args.version, args=match_args(args))
