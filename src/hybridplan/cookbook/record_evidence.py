"""A page's measured launches as the planner's evidence (planner.evidence.EvidenceSource), for `plan`'s evidence-bound
fraction and a verdict's confidence: every launch a bundled page records on a card (its `records:`), and every
selection a cell's measurements cover (the badge's `verification.measurements`: the cell's recipe as the page
composes it for that selection, the Deploy command, measured on the cell's card), each resolved once under the
release (or build profile) the page is modelled by, which is what ran. So a page's own measurements are evidence
for the cells they measured: their Deploy command on their card is "measured".

Deriving them renders every measured selection (composition, the calculator's ratio, the engine's resolution), far
more than a verdict's start-up can pay, so they ship in the evidence table (evidence_table.py, section
`pages`); tests/cookbook/test_record_evidence.py holds it equal to the pages. A verdict, and `plan`'s bound below the
launches that failed (`measured_failure`), read only the table: no page model, no renderer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Mapping, Sequence

from hybridplan.hardware.catalog import GPU
from hybridplan.evidence import EvidencePoint

if TYPE_CHECKING:
    from hybridplan.cookbook.schema import Page
    from hybridplan.engine.api import LaunchCommand, MeasuredFailure



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
    from dataclasses import replace

    from hybridplan.errors import HybridPlanError
    from hybridplan.engine.api import for_engine, for_version

    version = page.engine_version
    engine = for_engine(for_version(version).name, version)
    gpus = {h.id: h.gpu for h in page.hardware}
    out = []
    for launch in _record_launches(page) + _measured_launches(page):
        gpu_id = gpus.get(launch.hw)
        if gpu_id is None:
            continue
        try:  # the engine's own point for the launch, as for a public report; the page adds its build and load
            p = engine.launch_evidence(launch.command.text(), gpu_id, kind="page record", label=launch.label,
                                       source=launch.source, outcome=launch.outcome, phase=launch.phase)
        except HybridPlanError:
            continue
        out.append(replace(p, build=launch.build, max_running_requests=p.max_running_requests or launch.concurrency))
    return tuple(out)


# resolved arguments that must be equal for a failed launch to speak for another command (the rest bound it
# monotonically: bounds)
SAME = ("model_path", "speculative_algorithm", "speculative_draft_model_path", "speculative_num_draft_tokens",
        "speculative_num_steps", "speculative_eagle_topk", "mamba_radix_cache_strategy", "mamba_ssm_dtype",
        "kv_cache_dtype", "max_running_requests", "cuda_graph_decode_max_bs", "tp_size", "pp_size", "page_size",
        "attention_backend", "context_length", "enable_linear_replayssm_spec")


def _num(args: Mapping[str, Any], key: str) -> float:
    v = args.get(key)
    return float(v) if v is not None else 0.0


def bounds(failed_args: Mapping[str, Any], failed_phase: str | None, args: Mapping[str, Any]) -> bool:
    """Whether a failed launch (its resolved args) shows that `args` fails too: the same settings, moved the way that
    makes it worse (a higher fraction or a larger prefill chunk for an out-of-memory at capture or on the first
    request, a lower fraction for a pool too small)."""
    if any(failed_args.get(k) != args.get(k) for k in SAME):
        return False
    mfs, fmfs = _num(args, "mem_fraction_static"), _num(failed_args, "mem_fraction_static")
    if failed_phase in ("cuda_graph", "first_request"):
        return mfs >= fmfs and _num(args, "chunked_prefill_size") >= _num(failed_args, "chunked_prefill_size")
    if failed_phase in ("weights", "kv_pool"):
        return mfs <= fmfs
    same_split = all(failed_args.get(k) == args.get(k) for k in ("mamba_full_memory_ratio", "max_mamba_cache_size",
                                                                 "chunked_prefill_size"))
    return same_split and (mfs <= fmfs if failed_phase == "state_pool" else mfs == fmfs)


def measured_failure(args: Mapping[str, Any], gpu_id: str) -> MeasuredFailure | None:
    """The first launch a bundled page measured failing on the card (its records, and the cells whose measurements
    failed) whose settings show `args` failing too, as the planner takes it (FailureLookup): what `plan` must stay
    clear of. Each failed launch is compared as it ran (resolved under its page's release: the card ran out all the
    same under any release that resolves a command to those settings); read from the table, no page model."""
    from hybridplan.engine.api import MeasuredFailure

    from hybridplan.evidence_table import rows

    for p in rows("pages"):
        if p["outcome"] == "failed" and p["gpu"] == gpu_id and p["args"] is not None \
                and bounds({**p["args"], "mem_fraction_static": p["mem_fraction_static"]}, p["phase"], args):
            return MeasuredFailure(label=p["label"], phase=p["phase"], build=p["build"] or "", source=p["source"])
    return None


def page_evidence(gpu: GPU, version: str) -> Sequence[EvidencePoint]:
    """The bundled pages' measured launches on the card, or on a card whose fraction evidence transfers to it (each
    resolved under its own page's release: `version`, the release a verdict models, decides only whether one is
    "measured"), read from the table."""
    from hybridplan.evidence_table import on_card

    return on_card("pages", gpu)
