"""The JSON API: each endpoint calls the function its CLI command calls and returns the same dict as `--json`."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse

from hybridplan.web.errors import STATUS_FOR_EXIT, GuardedRoute
from hybridplan.web.schemas import (ID_PATTERN, CompareRequest, ExplainRequest, LogCheckRequest, LogParseRequest,
                                   PlanRequest, RatioRequest, RenderRequest)

if TYPE_CHECKING:
    from hybridplan.cookbook.schema import Page
    from hybridplan.engine.api import LaunchCommand
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
    """JSON encoded exactly as the CLI's `emit_json` encodes it (non-JSON values as strings)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, default=str).encode()


def payload(result: dict[str, Any]) -> CliJSON:
    """A CLI payload; one carrying an engine refusal gets the refusal's status, as the CLI exits 3."""
    return CliJSON(result, status_code=STATUS_FOR_EXIT[3] if "error" in result else 200)


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


def _command_uploads(req: ExplainRequest | PlanRequest | RatioRequest, command: LaunchCommand) -> dict[str, Any]:
    """Uploads for a pasted command: its --model-path and draft path name them."""
    from hybridplan.loading import model_refs

    if req.config is None and req.draft_config is None:
        return {}
    return _uploads(req, *model_refs(command, req.engine_version))


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
    if req.engine == "vllm":
        return _explain_vllm(req, request)
    if req.kv_memory_gib is not None:
        from hybridplan.errors import BadInput

        raise BadInput("kv_memory_gib: vLLM's available KV memory; give `engine: vllm` (sglang takes pool_budget_gib)")
    from hybridplan.engine.api import parse_command
    from hybridplan.explain import explain as run
    from hybridplan.hardware.catalog import from_options

    from hybridplan.evidence_sources import all_evidence

    command = parse_command(req.command)
    with _sources(request, _command_uploads(req, command)):
        return payload(run(command, budget=req.pool_budget_gib, version=req.engine_version,
                           gpu=from_options(req.gpu, req.gpu_memory_gib), available_gib=req.available_gib,
                           pre_load_gib=req.pre_load_gib, weights_gib=req.weights_gib,
                           evidence=all_evidence))


# explain's SGLang-only inputs: `explain --engine vllm` sizes from kv_memory_gib and reads the card's sm from gpu
_SGLANG_ONLY = ("pool_budget_gib", "available_gib", "pre_load_gib", "weights_gib", "gpu_memory_gib", "config",
                "draft_config")


def _explain_vllm(req: ExplainRequest, request: Request) -> CliJSON:
    """`explain --engine vllm --json [--kv-memory-gib X] [--gpu G] -- <vllm command>`."""
    from hybridplan.errors import BadInput
    from hybridplan.vllm_explain import explain_vllm

    given = [name for name in _SGLANG_ONLY if getattr(req, name) is not None]
    if given:
        raise BadInput(f"{given[0]}: not taken with `engine: vllm` (it takes kv_memory_gib and gpu)")
    with _sources(request):
        return CliJSON(explain_vllm(req.command, version=req.engine_version, kv_memory_gib=req.kv_memory_gib,
                                    gpu=req.gpu))


@router.post("/compare", responses=ERRORS, summary="hybridplan compare --json")
def compare(req: CompareRequest, request: Request) -> CliJSON:
    """One model on SGLang and on vLLM at one request length, from the same cache memory or (memory left out) from
    what each leaves on the card, each at its own defaults (the `compare --json` object): KV tokens, state slots or
    state pages, the requests of that length each serves, and `why` they differ."""
    from hybridplan.engines_compare import compare_engines

    with _sources(request):
        return CliJSON(compare_engines(req.model, memory_gib=req.memory_gib, request_length=req.request_length,
                                       tp=req.tp, kv_cache_dtype=req.kv_cache_dtype, gpu=req.gpu,
                                       vllm_version=req.vllm_version))


@router.post("/plan", responses=ERRORS, summary="hybridplan plan --json")
def plan(req: PlanRequest, request: Request) -> CliJSON:
    """The fewest changes to a launch command (`command`, or the catalog's for `model`) that serve C requests of L
    tokens on a GPU, each with its reason; the fraction against the engine's default and the evidence; the memory
    breakdown, binding limit and the verdict's confidence; or why nothing fits and the cheapest change that would
    (the `plan --json` object; `fits: false` is the CLI's exit 1, still a 200 answer). With `engine: vllm`, the
    `plan --engine vllm --json` object: from one measured boot (`kv_memory_gib`) or the card alone, the baseline and
    the candidates (utilization, prefix caching and its mamba cache mode, KV and state dtypes), cheapest first, each
    with `why`, the `best` and its `command`."""
    from hybridplan.cookbook.record_checks import measured_failure
    from hybridplan.engine.api import parse_command
    from hybridplan.errors import BadInput
    from hybridplan.evidence_sources import all_evidence
    from hybridplan.planner.plan import plan as run, target_from_options

    if req.engine == "vllm":
        return _plan_vllm(req, request)
    if req.kv_memory_gib is not None or "max_util" in req.model_fields_set:
        field = "kv_memory_gib" if req.kv_memory_gib is not None else "max_util"
        raise BadInput(f"{field}: taken with `engine: vllm` only (sglang's plan searches --mem-fraction-static; "
                       "max_mem_fraction caps it)")
    if req.command is not None and (req.model is not None or req.extra is not None):
        raise BadInput("command: give the launch command or `model` (with `extra`), not both")
    target = target_from_options(model=req.model, gpu=req.gpu, gpu_memory_gib=req.gpu_memory_gib,
                                 request_length=req.request_length, concurrency=req.concurrency, quant=req.quant,
                                 spec=req.spec, draft=req.draft, tp=req.tp,
                                 extra=req.command if req.command is not None else req.extra,
                                 max_mem_fraction=req.max_mem_fraction, pin=req.pin, weights_gib=req.weights_gib,
                                 hub=False, version=req.engine_version, measured=measured_failure,
                                 evidence=all_evidence)
    uploads = (_command_uploads(req, parse_command(req.command)) if req.command is not None
               else _uploads(req, req.model, req.draft))
    with _sources(request, uploads):
        return CliJSON(run(target))


# plan's SGLang-only inputs: `plan --engine vllm` takes the launch, the card, the measured KV memory and max_util
_PLAN_SGLANG_ONLY = ("model", "quant", "spec", "draft", "tp", "max_mem_fraction", "pin", "weights_gib", "extra",
                     "gpu_memory_gib", "config", "draft_config")


def _plan_vllm(req: PlanRequest, request: Request) -> CliJSON:
    """`plan --engine vllm --json --gpu G [--kv-memory-gib A] -L L -C C [--max-util U] -- <vllm command>`."""
    from hybridplan.errors import BadInput
    from hybridplan.planner.vllm_plan import VllmTarget, card, plan_vllm

    given = [name for name in _PLAN_SGLANG_ONLY if getattr(req, name) != PlanRequest.model_fields[name].default]
    if given:
        raise BadInput(f"{given[0]}: not taken with `engine: vllm` (it takes command, gpu, kv_memory_gib, max_util)")
    if req.command is None:
        raise BadInput("command: the vLLM launch to plan (vllm serve MODEL ...) is required with `engine: vllm`")
    target = VllmTarget(command=req.command, kv_memory_gib=req.kv_memory_gib, card=card(req.gpu),
                        request_length=req.request_length, concurrency=req.concurrency, max_util=req.max_util)
    with _sources(request):
        return CliJSON(plan_vllm(target, req.engine_version, req.gpu))


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
    """Pools, weights, graphs, caps and the failure phase read off a boot log (the `logs parse --json` object)."""
    from hybridplan.verify.logparse import parse_log

    return CliJSON(parse_log(req.log).as_dict())


@router.post("/logs/check", responses=ERRORS, summary="hybridplan logs check --json")
def logs_check(req: LogCheckRequest, request: Request) -> CliJSON:
    """Predicted vs observed for a boot log and the command that wrote it (the `logs check --json` object);
    `explained: false` is the CLI's exit 1 (findings), still a 200 answer."""
    from hybridplan.errors import BadInput

    if req.engine == "vllm":
        from hybridplan.verify.vllm_check import check_vllm_log

        if req.log_version is not None:
            raise BadInput("log_version: an sglang build; vLLM's log states its release (use engine_version)")
        with _sources(request):
            return CliJSON(check_vllm_log(req.log, req.command, gpu=req.gpu, version=req.engine_version))
    if req.gpu is not None:
        raise BadInput("gpu: taken with `engine: vllm` only (an sglang log states its own memory)")
    if req.command is None:
        raise BadInput("command: the command the server ran is required for an sglang log")
    from hybridplan.engine.api import parse_command
    from hybridplan.verify.check import check_log
    from hybridplan.verify.logparse import parse_log

    with _sources(request):
        return CliJSON(check_log(parse_log(req.log), parse_command(req.command), log_version=req.log_version,
                                 version=req.engine_version))


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
    read with its own env; `install`, `build_warnings`, `examples` and `accuracy` are the rest of the docs page."""
    from hybridplan.cookbook.pages import at_version
    from hybridplan.cookbook.render import Delta, render as run
    from hybridplan.cookbook.selection import check_picks

    page = at_version(_bundled_page(req.page), req.engine_version)
    picks = check_picks(page, req.picks)
    with _sources(request):
        out = run(_with_workload(page, req.request_length, req.concurrency), picks, docker=req.docker,
                  placeholders=dict(req.placeholders), pin_ratio=not req.no_ratio,
                  delta=Delta(flags=tuple(req.set_flags), env=tuple(req.set_env))
                  if req.set_flags or req.set_env else None)
    return CliJSON(out.as_dict())


@router.post("/ratio", responses=ERRORS, summary="hybridplan ratio --json")
def ratio(req: RatioRequest, request: Request) -> CliJSON:
    """The balanced --mamba-full-memory-ratio and the --max-mamba-cache-size pin for L-token requests at
    concurrency C, with S, D, state/slot, KV/token and the formula (the `ratio --json` object)."""
    from hybridplan.engine.api import parse_command
    from hybridplan.hardware.catalog import from_options
    from hybridplan.planner.ratio import balanced_ratio

    command = parse_command(req.command)
    with _sources(request, _command_uploads(req, command)):
        return CliJSON(balanced_ratio(command, request_length=req.request_length, concurrency=req.concurrency,
                                      budget=req.pool_budget_gib, gpu=from_options(req.gpu, req.gpu_memory_gib),
                                      version=req.engine_version))
