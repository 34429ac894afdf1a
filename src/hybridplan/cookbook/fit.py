"""GPU checks for `cookbook check`: does each rendered command fit its hardware according to the engine model, and
is a greyed combination perhaps reachable after all? do the page's measured records agree with the model?

The pool budget of a (command, GPU) pair comes from the planner's memory timeline (weights, the mem-fraction slack,
the multimodal reservation); the pools from the engine version's own sizing; whether it boots and serves, and else
in which phase it fails, from planner.verdict. A measured pin the model says cannot boot or serve is an error naming
the phase and the numbers; an unmeasured recipe that does not is a warning; a greyed combination the model says fits
is reported (info) as "unmeasured, possibly reachable"; a record the model disagrees with is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hybridplan.cookbook import engine_view
from hybridplan.cookbook.compose import flag_value
from hybridplan.cookbook import selection as S
from hybridplan.cookbook.render import Rendered, compose_cell
from hybridplan.cookbook.schema import Page
from hybridplan.cookbook.text import first_match, placeholder_values
from hybridplan.engine.api import LaunchCommand
from hybridplan.errors import EngineRefusal, HybridPlanError

if TYPE_CHECKING:
    from hybridplan.engine.api import Verdict

GIB = 1 << 30


@dataclass(frozen=True)
class Fit:
    """What one command gets on one GPU: K, T, admitted requests, and the verdict; or why it cannot start."""

    gpu: str
    refusal: str | None = None  # the engine would not start (EngineRefusal while sizing)
    unloadable: str | None = None  # the engine model cannot even resolve the command
    slots_per_request: int = 0
    max_mamba_cache_size: int = 0
    max_total_num_tokens: int = 0
    max_running_requests: int = 0
    binding: str = ""
    pinned_mrr: int | None = None  # --max-running-requests as the recipe pins it (per attention-DP rank)
    verdict: Verdict | None = None  # for one request of the page's length
    note: str = ""


@lru_cache(maxsize=4096)
def size_on_gpu(command: LaunchCommand, gpu_id: str, version: str, request_tokens: int = 1) -> Fit:
    """Size the pools of a command on a catalog GPU, and predict whether one request of `request_tokens` serves."""
    from hybridplan.hardware.catalog import lookup
    from hybridplan.engine.api import for_loaded
    from hybridplan.cookbook.record_evidence import page_evidence
    from hybridplan.engine.api import predict

    card = lookup(gpu_id)
    loaded = engine_view.resolve(command, version, card.platform())
    if isinstance(loaded, HybridPlanError):
        return Fit(gpu=card.name, unloadable=loaded.message)
    try:
        tl, _ = for_loaded(loaded, gpu=card)
        s = tl.sizing()
    except EngineRefusal as exc:
        return Fit(gpu=card.name, refusal=exc.message)
    return Fit(gpu=card.name, slots_per_request=s.slots_per_request, max_mamba_cache_size=s.max_mamba_cache_size,
               max_total_num_tokens=s.max_total_num_tokens, max_running_requests=s.max_running_requests,
               binding=s.requests.binding,
               pinned_mrr=s.requests.requested if loaded.args.explicit("max_running_requests") else None,
               verdict=predict(loaded, tl, request_tokens=request_tokens, gpu=card,
                               evidence=page_evidence(card, loaded.version)),
               note=f"pool budget {tl.rest_gib.value:.2f} GiB ({tl.rest_gib.source.value})")


def request_tokens(page: Page, r: Rendered) -> int:
    """One request's tokens: the measured workload (ISL + OSL) if a record covers the selection, else the page's L."""
    for m in (r.verification or {}).get("measurements", []):
        if m.get("workload"):
            return int(m["workload"]["isl"] + m["workload"]["osl"])
    return page.workload.request_length if page.workload else 1


PHASE_WORDS = {"weights": "loading the weights", "state_pool": "allocating the state pool",
               "kv_pool": "allocating the KV pool", "cuda_graph": "capturing CUDA graphs",
               "first_request": "on the first request"}


def check_rendered(page: Page, r: Rendered) -> list[tuple[str, str, str]]:
    """(severity, rule, message) for one rendered selection on its hardware."""
    hw = next(h for h in page.hardware if h.id == r.selection["hw"])
    if hw.gpu is None:
        return []
    L = request_tokens(page, r)
    fit = size_on_gpu(engine_view.sized_command(r.flags, r.env, {}), hw.gpu, page.engine_version, L)
    if fit.unloadable:
        return [("error", "engine", f"the engine model (sglang {page.engine_version}) rejects this command: "
                 f"{fit.unloadable}")]
    measured = r.badge in ("verified", "in-progress")
    severity = "error" if measured else "warning"
    what = "this measured pin" if measured else "this recipe"
    # the fraction a maintainer retunes, named in the finding
    pinned = f"{what} (--mem-fraction-static {flag_value(r.flags, '--mem-fraction-static') or 'engine default'})"
    if fit.refusal:
        return [(severity, "pin-fit", f"on {fit.gpu} the engine model says {pinned} cannot start: {fit.refusal}")]
    out = []
    if fit.pinned_mrr is not None and fit.max_running_requests < fit.pinned_mrr:
        out.append((severity, "pin-fit", f"{what} pins --max-running-requests {fit.pinned_mrr} but on {fit.gpu} the "
                    f"pools admit {fit.max_running_requests} (bound by the {fit.binding.replace('_', ' ')}; "
                    f"K = {fit.max_mamba_cache_size} slots at S = {fit.slots_per_request}, {fit.note})"))
    v = fit.verdict
    if v is not None and not v.serves:
        conf = f"; confidence {v.confidence.level}: {v.confidence.note}" if v.confidence is not None else ""
        phase = v.phase or "unknown"  # a failing verdict names its phase
        out.append((severity, "pin-fit", f"on {fit.gpu} {pinned} fails {PHASE_WORDS.get(phase, phase)} ({phase}): {v.why} "
                    f"({fit.note}; a request of {L:,} tokens{conf})"))
    return out


def check_records(page: Page) -> list[tuple[str, str, str]]:
    """Every measured record against the model: a disagreement is an error, so the model gets recalibrated rather
    than the record ignored."""
    from hybridplan.cookbook.record_checks import check

    gpus = {h.id: h.gpu for h in page.hardware}
    out = []
    for rec in page.records:
        gpu = gpus.get(rec.hw)
        if gpu is None:
            out.append(("error", "record", f"record {rec.id}: hardware {rec.hw!r} is not one of the page's cards"))
            continue
        out += [("error", "record", c.message()) for c in check(rec, gpu, page.engine_version)
                if not c.agrees]
    return out


def _greyed(page: Page) -> list[dict[str, str]]:
    """hw x match combinations with no cell that no `unsupported` rule excludes, on a default-overlay selection."""
    combos = S.combinations([r for r in S.rows(page) if not r.overlay])
    overlays = {d.id: d.default_id for d in page.overlay_dims}
    out = []
    for combo in combos:
        sel = {**combo, **overlays}
        if S.find_cell(page, sel) is None and not S.no_cell_reason(page, sel)[1]:
            out.append(sel)
    return out


def check_greyed(page: Page) -> list[tuple[str, str, str, dict[str, Any]]]:
    """Greyed combinations the engine model says fit with a same-hardware cell's flags: unmeasured, possibly
    reachable (info). The probe uses the first cell of that hardware, the combination's model name and the overlay
    defaults."""
    out = []
    for sel in _greyed(page):
        hw = next(h for h in page.hardware if h.id == sel["hw"])
        neighbour = next((c for c in page.lookup if c.match.get("hw") == sel["hw"] and not c.cell.redirect), None)
        if hw.gpu is None or neighbour is None:
            continue
        model = first_match(page.model_names, sel) or ""
        values = placeholder_values(page, model)
        comp = compose_cell(page, sel, neighbour.cell, values)
        fit = size_on_gpu(engine_view.sized_command(comp.flags, comp.env, values), hw.gpu, page.engine_version)
        L = page.workload.request_length if page.workload else 1
        if fit.unloadable or fit.refusal or fit.max_running_requests < 1 or fit.max_total_num_tokens < L:
            continue
        combo = " x ".join(sel[d] for d in page.dims)
        out.append(("info", "unmeasured-reachable",
                    f"unmeasured, possibly reachable: {combo} has no cell, but with the {neighbour.match['hw']} "
                    f"cell's flags the engine model fits it on {fit.gpu} (K = {fit.max_mamba_cache_size}, "
                    f"{fit.max_total_num_tokens:,} KV tokens, {fit.max_running_requests} requests; {fit.note})", sel))
    return out
