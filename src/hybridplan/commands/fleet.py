"""`hybridplan fleet`: the layouts each engine runs a model in on a card, ranked by the GPUs they need for C concurrent
sessions of L tokens, and the chosen layout's launch (every role and node) and manifests."""

from __future__ import annotations

from typing import Optional

import typer

from hybridplan.commands import options as opt
from hybridplan.commands.app import app, emit_json, run_guarded
from hybridplan.limits import MAX_PARALLEL

MANIFESTS = {"k8s": "kubernetes", "compose": "compose"}


@app.command()
def fleet(
    model: str = typer.Option(..., "--model", help="Model id or path (the catalog resolves offline)."),
    gpu: str = typer.Option(..., "--gpu", help="A GPU from the catalog (rtx5090, h200, b200, ...): every server's card."),
    request_length: int = opt.REQUEST_LENGTH,
    concurrency: int = opt.CONCURRENCY,
    gpus_available: Optional[int] = typer.Option(None, "--gpus-available", callback=opt.bounded(
        1, MAX_PARALLEL, "GPUs in one deployment"), help="GPUs the fleet may take (default: no bound; servers up to "
        "4 nodes are enumerated)."),
    gpus_per_node: int = typer.Option(8, "--gpus-per-node", callback=opt.bounded(1, MAX_PARALLEL, "GPUs in one node"),
                                      help="Cards in one node: a larger server spans nodes."),
    engine: str = typer.Option("both", "--engine", help="sglang, vllm or both."),
    sglang_version: Optional[str] = typer.Option(None, "--sglang-version",
                                                 help="The SGLang release to model (default: the newest modelled)."),
    vllm_version: Optional[str] = typer.Option(None, "--vllm-version",
                                               help="The vLLM release to model (default: the newest modelled)."),
    pick: Optional[int] = typer.Option(None, "--pick", callback=opt.bounded(1, 10_000, "a row of the table"),
                                       help="Launch this row of the table instead of the first that serves."),
    manifest: Optional[str] = typer.Option(None, "--manifest", help="Print only the chosen launch's manifest: k8s "
                                           "(Kubernetes; a LeaderWorkerSet for a server that spans nodes) or compose."),
    show_all: bool = typer.Option(False, "--all", help="Every row, not the first ones."),
    as_json: bool = opt.JSON,
) -> None:
    """The layouts each engine runs the model in on the card (TP, PP, attention DP, replicas, servers across nodes,
    prefill/decode disaggregation), each server sized by the engine model and the evidence-bound planner, ranked by
    the GPUs needed for C concurrent sessions of L tokens (then by headroom), with the chosen layout's command for
    every role and node, each checked by the engine's verdict, and a Kubernetes or compose manifest."""

    def body() -> int:
        from hybridplan.calibration.sources import all_evidence
        from hybridplan.cookbook.record_evidence import measured_failure
        from hybridplan.engine.api import engines, for_engine
        from hybridplan.engine.fleet_requests import FleetRequest
        from hybridplan.errors import BadInput
        from hybridplan.planner.fleet import plan_fleet

        names = engines() if engine == "both" else (engine,)
        if engine != "both" and engine not in engines():
            raise BadInput(f"--engine: {engine!r} is not modelled ({', '.join(engines())} or both)")
        if manifest is not None and manifest not in MANIFESTS:
            raise BadInput(f"--manifest: {manifest!r} (choose k8s or compose)")
        versions = {"sglang": sglang_version, "vllm": vllm_version}  # the --<engine>-version options, by engine
        req = FleetRequest(model=model, gpu=gpu, request_length=request_length, concurrency=concurrency,
                           gpus_available=gpus_available, gpus_per_node=gpus_per_node, evidence=all_evidence,
                           measured=measured_failure)
        result = plan_fleet(req, [for_engine(n, versions.get(n)) for n in names], pick=pick)
        if manifest is not None:
            return _print_manifest(result, MANIFESTS[manifest])
        if as_json:
            emit_json(result)
        else:
            from hybridplan.render.fleet import print_fleet

            print_fleet(result, show_all=show_all)
        return 0 if result["launch"] is not None else 1

    run_guarded(body, as_json)


def _print_manifest(result: dict[str, object], kind: str) -> int:
    """The chosen launch's manifest alone (for a pipe into kubectl or a file), or why there is none."""
    import sys

    from hybridplan.errors import BadInput

    found = result.get("manifests")
    if not isinstance(found, dict):
        raise BadInput(str(result.get("why") or "no layout was chosen: no manifest"))
    text = found.get(kind)
    if text is None:
        raise BadInput(f"--manifest compose: {found.get('compose_why')}")
    sys.stdout.write(str(text))
    return 0
