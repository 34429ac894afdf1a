"""A page's measured records as the planner's evidence (planner.evidence.EvidenceSource): every launch a bundled page
records on a card, resolved once under the release (or build profile) the page is modelled by, which is what ran,
for `plan`'s evidence-bound fraction and a verdict's confidence."""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from hybridplan.cookbook.record_checks import commands
from hybridplan.hardware.catalog import GPU
from hybridplan.planner.evidence import EvidencePoint, match_args, model_key, same_class


@lru_cache(maxsize=1)
def _points() -> tuple[EvidencePoint, ...]:
    """Every launch the bundled pages record, as evidence points (launches the model cannot load are left out:
    `cookbook check` reports them)."""
    from hybridplan.cookbook.pages import bundled_ids, load_page
    from hybridplan.errors import HybridPlanError
    from hybridplan.hardware.catalog import lookup
    from hybridplan.loading import load

    out = []
    for pid in bundled_ids():
        page = load_page(pid)
        version = page.engine_version
        gpus = {h.id: h.gpu for h in page.hardware}
        for r in page.records:
            gpu_id = gpus.get(r.hw)
            if gpu_id is None:
                continue
            card = lookup(gpu_id)
            for label, command in commands(r):
                try:
                    args = load(command, platform=card.platform(), version=version).args
                except HybridPlanError:
                    continue
                if args["mem_fraction_static"] is None:
                    continue
                out.append(EvidencePoint(
                    kind="page record", label=f"{pid}:{label}", source=r.source, gpu=gpu_id, model=model_key(args),
                    outcome=r.outcome, phase=r.phase, mem_fraction_static=float(args["mem_fraction_static"]),
                    chunked_prefill_size=args["chunked_prefill_size"],
                    max_running_requests=args["max_running_requests"] or r.concurrency,
                    cuda_graph_max_bs=args["cuda_graph_decode_max_bs"], tp=args["tp_size"], build=r.build, version=version,
                    args=match_args(args)))
    return tuple(out)


def page_evidence(gpu: GPU, version: str) -> Sequence[EvidencePoint]:
    """The bundled pages' records on the card, or on a card whose fraction evidence transfers to it (each resolved
    under its own page's release: `version`, the release a verdict models, decides only whether one is "measured")."""
    return tuple(p for p in _points() if p.gpu == gpu.id or same_class(gpu, p.gpu))
