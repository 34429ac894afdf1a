"""A page's measured records as the planner's evidence (planner.evidence.EvidenceSource): every launch a bundled page
records on a card, resolved once under the release (or build profile) the page is modelled by, which is what ran,
for `plan`'s evidence-bound fraction and a verdict's confidence.

A verdict asks for one card, and most cards have no records: a light index of the cards each page records on (read
from the plain YAML, no page model) decides which pages are loaded through the schema at all."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

from hybridplan.hardware.catalog import GPU
from hybridplan.packaged import plain_yaml
from hybridplan.evidence import EvidencePoint, match_args, model_key, same_class

# a page's top-level `records:` key (bundled pages are block-style YAML; test_record_evidence holds the index to the
# page model): a page without one is not parsed for the index
_RECORDS_KEY = re.compile(r"^records\s*:", re.MULTILINE)


@lru_cache(maxsize=1)
def _recorded() -> tuple[tuple[str, str], ...]:
    """(page id, GPU catalog id) for every card a bundled page has a record on: a superset of what the page model
    keeps (its own hardware entry wins over the shared list, as cookbook.pages._merge_hardware; `supported_hardware`
    is left to the model)."""
    from importlib import resources

    pages = resources.files("hybridplan") / "data" / "cookbooks"  # cookbook.pages: the bundled pages, sorted by id
    shared = {h["id"]: h.get("gpu") for h in plain_yaml((pages / "_hardware.yaml").read_text())["hardware"]}
    out: list[tuple[str, str]] = []
    for pid in sorted(f.name[:-5] for f in pages.iterdir() if f.name.endswith(".yaml") and not f.name.startswith("_")):
        text = (pages / f"{pid}.yaml").read_text()
        if not _RECORDS_KEY.search(text):
            continue
        data = plain_yaml(text)
        gpus = {**shared, **{h["id"]: h.get("gpu") for h in data.get("hardware") or [] if isinstance(h, dict)}}
        out += [(pid, gpus[r["hw"]]) for r in data.get("records") or [] if gpus.get(r.get("hw")) is not None]
    return tuple(dict.fromkeys(out))


@lru_cache(maxsize=None)
def _points(page_id: str) -> tuple[EvidencePoint, ...]:
    """Every launch one bundled page records, as evidence points (launches the model cannot load are left out:
    `cookbook check` reports them)."""
    from hybridplan.cookbook.pages import load_page
    from hybridplan.cookbook.record_checks import commands
    from hybridplan.errors import HybridPlanError
    from hybridplan.hardware.catalog import lookup
    from hybridplan.engine.api import load

    page = load_page(page_id)
    version = page.engine_version
    gpus = {h.id: h.gpu for h in page.hardware}
    out = []
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
                kind="page record", label=f"{page_id}:{label}", source=r.source, gpu=gpu_id, model=model_key(args),
                outcome=r.outcome, phase=r.phase, mem_fraction_static=float(args["mem_fraction_static"]),
                chunked_prefill_size=args["chunked_prefill_size"],
                max_running_requests=args["max_running_requests"] or r.concurrency,
                cuda_graph_max_bs=args["cuda_graph_decode_max_bs"], tp=args["tp_size"], build=r.build, version=version,
                args=match_args(args)))
    return tuple(out)


def _on(gpu: GPU, gpu_id: str) -> bool:
    return gpu_id == gpu.id or same_class(gpu, gpu_id)


def page_evidence(gpu: GPU, version: str) -> Sequence[EvidencePoint]:
    """The bundled pages' records on the card, or on a card whose fraction evidence transfers to it (each resolved
    under its own page's release: `version`, the release a verdict models, decides only whether one is "measured");
    only the pages that record on such a card are loaded."""
    pages = dict.fromkeys(pid for pid, gpu_id in _recorded() if _on(gpu, gpu_id))
    return tuple(p for pid in pages for p in _points(pid) if _on(gpu, p.gpu))
