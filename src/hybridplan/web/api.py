"""The JSON API: each endpoint calls the function its CLI command calls (the Python API's `run_*` where there is one,
hybridplan/api/calls.py) and returns the same dict as `--json`; a payload carrying an engine refusal gets the
refusal's status, as the CLI exits 3."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse

from hybridplan.web.errors import STATUS_FOR_EXIT, GuardedRoute
from hybridplan.web.schemas import (ID_PATTERN, CompareRequest, ExplainRequest, FleetRequest, LogCheckRequest,
                                   LogParseRequest, PlanRequest, RatioRequest, RenderRequest)

if TYPE_CHECKING:
    from hybridplan.cookbook.schema import Page
    from hybridplan.web.schemas import _WithModel

ERROR_SCHEMA = {"type": "object", "properties": {"error": {"type": "object", "properties": {
    "message": {"type": "string"}, "type": {"type": "string"}, "rule": {"type": "string"}}}}}
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "Bad input (the CLI's exit 2): one-line message under `error`.",
          "content": {"application/json": {"schema": ERROR_SCHEMA}}},
    422: {"description": "The engine would refuse to start (the CLI's exit 3): the engine's message and rule under "
                         "`error`; where the CLI still prints a payload, the body is that payload."},
    413: {"description": "Request body too large."},
}

READ_ERRORS: dict[int | str, dict[str, Any]] = {400: ERRORS[400]}  # the GET lists take no body and never reach the engine's refusals

router = APIRouter(prefix="/api", tags=["api"], route_class=GuardedRoute)


class CliJSON(JSONResponse):
    """JSON encoded exactly as the CLI's `emit_json` encodes it (non-JSON values as strings; a NaN or infinity is
    a 400 naming its field, never `NaN` in the body)."""

    def render(self, content: Any) -> bytes:
        from hybridplan.jsontext import dumps

        return dumps(content).encode()


def _uploads(req: _WithModel, model_ref: str | None, draft_ref: str | None) -> dict[str, Any]:
    """The request's `config` / `draft_config`, keyed by the model and draft references they stand for."""
    from hybridplan.errors import BadInput
    from hybridplan.model_sources import Upload

    out = {}
    if req.config is not None and model_ref:
        out[model_ref] = Upload(field="config", config=req.config)
    if req.draft_config is not None:
        if not draft_ref:
            raise BadInput("draft_config: the request names no draft model for it (`draft`, or "
                           "--speculative-draft-model-path in the command)")
        if draft_ref in out:
            raise BadInput("draft_config: the draft reference is the target's; give the draft its own name")
        out[draft_ref] = Upload(field="draft_config", config=req.draft_config)
    return out


def _command_uploads(req: ExplainRequest | PlanRequest | RatioRequest, command: str, engine: str) -> dict[str, Any]:
    """Uploads for a pasted command: the model and draft references its engine's parser reads name them."""
    from hybridplan.engine.api import for_engine

    if req.config is None and req.draft_config is None:
        return {}
    return _uploads(req, *for_engine(engine, req.engine_version).model_refs(command))


@contextmanager
def _sources(request: Request, uploads: dict[str, Any] | None = None) -> Iterator[None]:
    """Resolve models under the server's source policy (never an arbitrary server path) and the request's uploads."""
    from hybridplan.model_sources import model_sources

    with model_sources(request.app.state.model_sources, uploads):
        yield


@router.post("/explain", responses=ERRORS, summary="hybridplan explain --json")
def explain(req: ExplainRequest, request: Request) -> CliJSON:
    """What the engine will allocate for a launch command, and why (the `explain --json` object); with a GPU or a
    boot log's A and P, also the memory timeline and where the card's memory goes (`memory`). With `engine: vllm`,
    the `explain --engine vllm --json` object: block size, pages before and after unification, groups, state pages a
    request takes and, from `kv_memory_gib`, the KV tokens and concurrency vLLM logs."""
    from hybridplan.api.calls import run_explain
    from hybridplan.engine import requests as rq

    ask = rq.ExplainRequest(command=req.command, gpu=req.gpu, gpu_memory_gib=req.gpu_memory_gib,
                            pool_budget_gib=req.pool_budget_gib, available_gib=req.available_gib,
                            pre_load_gib=req.pre_load_gib, weights_gib=req.weights_gib,
                            kv_memory_gib=req.kv_memory_gib)
    with _sources(request, _command_uploads(req, req.command, req.engine)):
        result = run_explain(ask, req.engine, req.engine_version)
    return CliJSON(result.payload, status_code=STATUS_FOR_EXIT[result.exit_code])


@router.post("/compare", responses=ERRORS, summary="hybridplan compare --json")
def compare(req: CompareRequest, request: Request) -> CliJSON:
    """One model on every modelled engine at one request length, from the same cache memory or (memory left out)
    from what each leaves on the card, each at its own defaults or from one engine's whole launch (`command`) carried
    to the others (the `compare --json` object): KV tokens, state slots or state pages, the requests of that length
    each serves, each engine's verdict (with the cheapest change where it fails on the card), and `why` they
    differ."""
    from hybridplan.api.calls import run_compare
    from hybridplan.engine import requests as rq

    with _sources(request):
        return CliJSON(run_compare(rq.CompareRequest(model=req.model, request_length=req.request_length,
                                                     memory_gib=req.memory_gib, tp=req.tp,
                                                     kv_cache_dtype=req.kv_cache_dtype, gpu=req.gpu,
                                                     gpu_memory_gib=req.gpu_memory_gib, command=req.command,
                                                     launch_engine=req.engine if req.command else None),
                                   {"sglang": req.sglang_version, "vllm": req.vllm_version}).payload)


@router.post("/fleet", responses=ERRORS, summary="hybridplan fleet --json")
def fleet(req: FleetRequest, request: Request) -> CliJSON:
    """The layouts each engine runs the model in on the card (TP, PP, attention DP, replicas, servers across nodes,
    prefill/decode disaggregation), each server sized by the engine model and the evidence-bound planner, ranked by
    the GPUs needed for `concurrency` sessions of `request_length` tokens, then by headroom (the `fleet --json`
    object): `rows`, the `chosen` row's `launch` (every role and node, each with the engine's verdict) and its
    `manifests` (Kubernetes, and compose where one host holds the fleet). No layout chosen is still a 200 answer."""
    from hybridplan.calibration.sources import all_evidence
    from hybridplan.cookbook.record_evidence import measured_failure
    from hybridplan.engine.api import engines, for_engine
    from hybridplan.engine.fleet_requests import FleetRequest as Ask
    from hybridplan.planner.fleet import plan_fleet

    names = engines() if req.engine == "both" else (req.engine,)
    versions = {"sglang": req.sglang_version, "vllm": req.vllm_version}
    ask = Ask(model=req.model, gpu=req.gpu, request_length=req.request_length,
              concurrency=req.concurrency, gpus_available=req.gpus_available,
              gpus_per_node=req.gpus_per_node, evidence=all_evidence, measured=measured_failure)
    with _sources(request):
        return CliJSON(plan_fleet(ask, [for_engine(n, versions.get(n)) for n in names], pick=req.pick))


@router.post("/plan", responses=ERRORS, summary="hybridplan plan --json")
def plan(req: PlanRequest, request: Request) -> CliJSON:
    """The fewest changes to a launch command (`command`, or the catalog's for `model`) that serve C requests of L
    tokens on a GPU, each with its reason; the fraction against the engine's default and the evidence; the memory
    breakdown, binding limit and the verdict's confidence; or why nothing fits and the cheapest change that would
    (the `plan --json` object; `fits: false` is the CLI's exit 1, still a 200 answer). With `engine: vllm`, the
    `plan --engine vllm --json` object: from one measured boot (`kv_memory_gib`) or the card alone, the baseline and
    the candidates (utilization, prefix caching and its mamba cache mode, KV and state dtypes), cheapest first, each
    with `why`, the `best` and its `command`."""
    from hybridplan.api.calls import run_plan
    from hybridplan.engine import requests as rq

    ask = rq.PlanRequest(request_length=req.request_length, concurrency=req.concurrency, command=req.command,
                         model=req.model, gpu=req.gpu, gpu_memory_gib=req.gpu_memory_gib, quant=req.quant,
                         spec=req.spec, draft=req.draft, tp=req.tp, extra=req.extra,
                         max_mem_fraction=req.max_mem_fraction, pin=req.pin, weights_gib=req.weights_gib,
                         kv_memory_gib=req.kv_memory_gib,
                         max_util=req.max_util if "max_util" in req.model_fields_set else None)
    uploads = (_command_uploads(req, req.command, req.engine) if req.command is not None
               else _uploads(req, req.model, req.draft))
    with _sources(request, uploads):
        return CliJSON(run_plan(ask, req.engine, req.engine_version).payload)


@router.get("/models", responses=READ_ERRORS, summary="hybridplan models --json")
def models() -> CliJSON:
    """The bundled model catalog: ids that resolve offline (the `models --json` object)."""
    from hybridplan.models.catalog import listing

    return CliJSON({"models": listing()})


@router.get("/gpus", responses=READ_ERRORS, summary="The GPU catalog")
def gpus() -> CliJSON:
    """The GPU catalog the `--gpu` options take (ids, memory, architecture), in file order."""
    from hybridplan.hardware.catalog import catalog

    return CliJSON({"gpus": [g.as_dict() for g in catalog()]})


@router.post("/logs/parse", responses=ERRORS, summary="hybridplan logs parse --json")
def logs_parse(req: LogParseRequest) -> CliJSON:
    """What a boot log states: for sglang the pools, weights, graphs, caps and the failure phase (the `logs parse
    --json` object); `missing` names the lines a check needs that it lacks (the CLI's exit 1, still a 200 answer).
    A log holding none of the engine's lines is a 400 (naming the engine that wrote it, when one did)."""
    from hybridplan.engine.api import for_engine, refuse_foreign_log

    refuse_foreign_log(req.engine, req.log)
    return CliJSON(for_engine(req.engine).parse_log(req.log))


@router.post("/logs/check", responses=ERRORS, summary="hybridplan logs check --json")
def logs_check(req: LogCheckRequest, request: Request) -> CliJSON:
    """Predicted vs observed for a boot log and the command that wrote it (the `logs check --json` object);
    `explained: false` (a difference unexplained, or nothing compared: `missing`, `failure`) is the CLI's exit 1
    (findings), still a 200 answer; a log holding none of the engine's lines is a 400."""
    from hybridplan.api.calls import run_check_log
    from hybridplan.engine import requests as rq

    ask = rq.LogCheckRequest(log=req.log, command=req.command, log_version=req.log_version,
                             engine_version=req.engine_version, gpu=req.gpu)
    with _sources(request):
        return CliJSON(run_check_log(ask, req.engine).payload)


def _bundled_page(page_id: str) -> Page:
    """A bundled page by id; the web never reads page files from paths (the CLI's `load_page` would)."""
    from hybridplan.cookbook.pages import bundled_ids, load_page
    from hybridplan.errors import BadInput

    if page_id not in bundled_ids():
        raise BadInput(f"unknown cookbook page {page_id!r}; bundled: {', '.join(bundled_ids())}")
    return load_page(page_id)


@router.get("/pages", responses=READ_ERRORS, summary="hybridplan cookbook list --json")
def pages() -> CliJSON:
    """The bundled cookbook pages (the `cookbook list --json` object)."""
    from hybridplan.cookbook.matrix import listing

    return CliJSON(listing())


@router.get("/pages/{page_id}", responses=READ_ERRORS, summary="A page's selector rows (for the Deploy panel)")
def page_layout(page_id: str = Path(pattern=ID_PATTERN)) -> CliJSON:
    """A page's title, workload, install note, selector rows (id, title, match or overlay, option ids), hardware and
    placeholders, in the order the Deploy panel shows them; `cookbook export --format json` carries the same fields
    for docs sites."""
    from hybridplan.cookbook.selection import rows

    page = _bundled_page(page_id)
    data = page.model_dump(mode="json", by_alias=True, exclude_none=True)
    return CliJSON({
        **{k: data.get(k) for k in ("id", "model", "description", "source", "engine_version", "workload", "install")},
        "rows": [{"id": r.id, "title": r.title, "kind": "overlay" if r.overlay else "match",
                  "options": [o.id for o in r.options]} for r in rows(page)],
        "hardware": [{"id": h.id, "label": h.label, "group": h.group, "gpu": h.gpu} for h in page.hardware],
        "placeholders": [{"key": k, "label": p.label, "default": p.default, "target": p.target}
                         for k, p in page.placeholders.items()],
    })


def _with_workload(page: Page, request_length: int | None, concurrency: int | None) -> Page:
    """The page with the Calculator's L and C in place of its own workload (unset ones keep the page's)."""
    from hybridplan.cookbook.schema import PageWorkload
    from hybridplan.errors import BadInput

    if request_length is None and concurrency is None:
        return page
    own = page.workload
    if own is None:
        if request_length is None or concurrency is None:
            raise BadInput(f"page {page.id} has no calculator workload: give both request_length and concurrency")
        workload = PageWorkload(request_length=request_length, concurrency=concurrency)
    else:
        workload = PageWorkload(request_length=request_length or own.request_length,
                                concurrency=concurrency or own.concurrency)
    return page.model_copy(update={"workload": workload})


@router.post("/render", responses=ERRORS, summary="hybridplan cookbook render --json")
def render(req: RenderRequest, request: Request) -> CliJSON:
    """The Deploy panel's command for a selection (the `cookbook render --json` object): selection after reseating,
    reseat notes, flags, env, command, badge, warnings, greyed options with reasons, and the calculator's ratio;
    with `set_flags` / `set_env`, also the `effective` command (those flags in place of their families, that env)
    and its own ratio; `calculator` holds the `ratio --json` object for the base and the effective command, each
    read with its own env; `install`, `build_warnings`, `examples` and `accuracy` are the rest of the docs page;
    `badge_evidence` whether the measured launches back the badge (the confidence the Memory picture shows)."""
    from hybridplan.calibration.sources import all_evidence
    from hybridplan.cookbook.pages import at_version
    from hybridplan.cookbook.render import Delta, render as run
    from hybridplan.cookbook.selection import check_picks

    page = at_version(_bundled_page(req.page), req.engine_version)
    picks = check_picks(page, req.picks)
    with _sources(request):
        out = run(_with_workload(page, req.request_length, req.concurrency), picks, docker=req.docker,
                  placeholders=dict(req.placeholders), pin_ratio=not req.no_ratio,
                  delta=Delta(flags=tuple(req.set_flags), env=tuple(req.set_env))
                  if req.set_flags or req.set_env else None, evidence=all_evidence)
    return CliJSON(out.as_dict())


@router.post("/ratio", responses=ERRORS, summary="hybridplan ratio --json")
def ratio(req: RatioRequest, request: Request) -> CliJSON:
    """The balanced --mamba-full-memory-ratio and the --max-mamba-cache-size pin for L-token requests at
    concurrency C, with S, D, state/slot, KV/token and the formula (the `ratio --json` object)."""
    from hybridplan.engine import requests as rq
    from hybridplan.engine.api import for_engine

    with _sources(request, _command_uploads(req, req.command, req.engine)):
        return CliJSON(for_engine(req.engine, req.engine_version).ratio(rq.RatioRequest(
            command=req.command, request_length=req.request_length, concurrency=req.concurrency,
            pool_budget_gib=req.pool_budget_gib, gpu=req.gpu, gpu_memory_gib=req.gpu_memory_gib)))
