"""A page's measured launches as the planner's evidence (planner.evidence.EvidenceSource), for `plan`'s evidence-bound
fraction and a verdict's confidence: every launch a bundled page records on a card (its `records:`), and every
selection a cell's measurements cover (the badge's `verification.measurements`: the cell's recipe as the page
composes it for that selection, the Deploy command, measured on the cell's card), each resolved once under the
release (or build profile) the page is modelled by, which is what ran. So a page's own measurements are evidence
for the cells they measured: their Deploy command on their card is "measured".

Deriving them renders every measured selection (composition, the calculator's ratio, the engine's resolution), far
more than a verdict's start-up can pay, so they ship as a table, data/page_evidence.json, one point per line,
written by `scripts/record_page_evidence.py`; tests/cookbook/test_record_evidence.py holds it equal to the pages.
A verdict reads only the table: no page model, no renderer."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Sequence

from hybridplan.hardware.catalog import GPU
from hybridplan.evidence import EvidencePoint, match_args, model_key, same_class

if TYPE_CHECKING:
    from hybridplan.cookbook.schema import Page
    from hybridplan.engine.api import LaunchCommand

TABLE = "page_evidence.json"  # in hybridplan/data


@dataclass(frozen=True, kw_only=True)
class _Launch:
    """One measured launch of a page, before the engine model resolves it."""

    label: str
    hw: str
    command: LaunchCommand
    outcome: Literal["served", "failed"]
    phase: str | None
    build: str | None
    concurrency: int | None
    source: str


def _record_launches(page: Page) -> list[_Launch]:
    """Every launch the page's `records:` stand for (a sweep is one launch per value)."""
    from hybridplan.cookbook.record_checks import commands

    return [_Launch(label=f"{page.id}:{label}", hw=r.hw, command=command, outcome=r.outcome, phase=r.phase,
                    build=r.build, concurrency=r.concurrency, source=r.source)
            for r in page.records for label, command in commands(r)]


def _outcome(measured: str) -> Literal["served", "failed"]:
    """A measurement's outcome as a launch's: it served (degraded included) or it failed (at boot or at runtime)."""
    return "served" if measured in ("serves", "degraded") else "failed"


def _measured_launches(page: Page) -> list[_Launch]:
    """The Deploy command of every selection that lands on a cell with measurements covering it, once per selection
    and outcome: what the badge's measurements ran (the page's recipe, its calculator ratio included)."""
    from hybridplan.cookbook import engine_view, selection as S
    from hybridplan.cookbook.conditions import evaluate
    from hybridplan.cookbook.render import render_landed, resolve_selection

    overlays = S.combinations([r for r in S.rows(page) if r.overlay])
    seen: set[tuple[tuple[str, str], ...]] = set()
    out = []
    for ref in page.lookup:
        measured = ref.cell.verification.measurements
        if not measured or ref.cell.redirect:
            continue
        for extra in overlays:
            sel, moves = resolve_selection(page, {**ref.match, **extra})
            landed = S.find_cell(page, sel)
            covering = [m for m in measured if evaluate(m.covers, sel)]
            if tuple(sel.items()) in seen or landed is None or landed.index != ref.index or not covering:
                continue
            seen.add(tuple(sel.items()))
            r = render_landed(page, sel, moves, panel=False)
            command = engine_view.sized_command(r.flags, r.env, {})
            where = " x ".join(sel[d] for d in page.dims)
            overlay = " ".join(f"{d.id}={sel[d.id]}" for d in page.overlay_dims)
            runs = {(_outcome(m.outcome), m.source or ""): m for m in covering}  # once per outcome and source
            for (outcome, source), m in runs.items():
                w = m.workload
                out.append(_Launch(label=f"{page.id}:{where}" + (f" ({overlay})" if overlay else ""), hw=sel["hw"],
                                   command=command, outcome=outcome, phase=None,
                                   build=m.build or ref.cell.verification.build,
                                   concurrency=max(w.concurrency) if w is not None else None,
                                   source=source or f"{page.id} cell {ref.index} measurements"))
    return out


def points(page: Page) -> tuple[EvidencePoint, ...]:
    """Every launch one page records or measures, as evidence points (launches the model cannot load are left out:
    `cookbook check` reports them)."""
    from hybridplan.errors import HybridPlanError
    from hybridplan.hardware.catalog import lookup
    from hybridplan.engine.api import load

    version = page.engine_version
    gpus = {h.id: h.gpu for h in page.hardware}
    out = []
    for launch in _record_launches(page) + _measured_launches(page):
        gpu_id = gpus.get(launch.hw)
        if gpu_id is None:
            continue
        try:
            args = load(launch.command, platform=lookup(gpu_id).platform(), version=version).args
        except HybridPlanError:
            continue
        if args["mem_fraction_static"] is None:
            continue
        out.append(EvidencePoint(
            kind="page record", label=launch.label, source=launch.source, gpu=gpu_id, model=model_key(args),
            outcome=launch.outcome, phase=launch.phase, mem_fraction_static=float(args["mem_fraction_static"]),
            chunked_prefill_size=args["chunked_prefill_size"],
            max_running_requests=args["max_running_requests"] or launch.concurrency,
            cuda_graph_max_bs=args["cuda_graph_decode_max_bs"], tp=args["tp_size"], build=launch.build,
            version=version, args=match_args(args)))
    return tuple(out)


def table_text(pages: dict[str, tuple[EvidencePoint, ...]]) -> str:
    """The table as written: each page's points in order, one JSON object a line (a changed point is a line)."""
    body = ",\n".join(f"  {json.dumps(pid)}: [\n" + ",\n".join(f"    {json.dumps(asdict(p))}" for p in pts) + "\n  ]"
                       for pid, pts in pages.items())
    return "{\n" + body + "\n}\n"


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, Any], ...]:
    """The shipped table's points, in page order, as read (each becomes an EvidencePoint when a card asks for it)."""
    from hybridplan.packaged import data_text

    return tuple(p for pts in json.loads(data_text(TABLE)).values() for p in pts)


def _on(gpu: GPU, gpu_id: str) -> bool:
    return gpu_id == gpu.id or same_class(gpu, gpu_id)


def page_evidence(gpu: GPU, version: str) -> Sequence[EvidencePoint]:
    """The bundled pages' measured launches on the card, or on a card whose fraction evidence transfers to it (each
    resolved under its own page's release: `version`, the release a verdict models, decides only whether one is
    "measured"), read from the table."""
    return tuple(EvidencePoint(**p) for p in _table() if _on(gpu, p["gpu"]))
