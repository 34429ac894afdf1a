"""The public calls (`hybridplan.explain`, `plan`, `compare`, `check_log`) and the `run_*` functions under them, which
the CLI and the web call too: each asks `engine.api.for_engine(name, version)` with a request of engine/requests.py,
refuses by name an option the engine does not take, hands the engine the measured launches a verdict rests on, and
wraps the payload in its typed result. An edge builds the request from its own inputs and spells a refused option its
own way (`spell`: the CLI's flags; the Python keywords and the web's fields are the request's field names).

`fleet` joins here once it exists (a `run_fleet` for the edges and a keyword call for Python), with its result in
results.py and its name in `hybridplan.__all__`.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping, Sequence

from hybridplan.api.results import Comparison, Explanation, LogCheck, Plan
from hybridplan.engine.requests import CompareRequest, ExplainRequest, LogCheckRequest, PlanRequest

Command = str | Sequence[str]  # a launch as one shell line, or as its words
Spell = Callable[[str], str]  # a request field -> the name the caller gave it (a refusal names it so)


def _words(command: Command) -> str | tuple[str, ...]:
    return command if isinstance(command, str) else tuple(command)


def _float(value: float | None) -> float | None:
    """A float option as the CLI and the web take it (20 is 20.0: the payload echoes it)."""
    return None if value is None else float(value)


def _line(command: str | tuple[str, ...] | None) -> str:
    return "" if command is None else command if isinstance(command, str) else shlex.join(command)


def _refuse_unused(engine: str, surface: str, request: object, takes: frozenset[str], spell: Spell) -> None:
    """BadInput naming the first option `engine`'s `surface` does not take, and the engines that do take it."""
    from hybridplan.engine.api import takers
    from hybridplan.engine.requests import unused

    unused(request, takes, engine, lambda name: takers(name, surface), spell)


def run_explain(req: ExplainRequest, engine: str | None = None, version: str | None = None,
                spell: Spell = str) -> Explanation:
    """`explain` on a built request (the CLI's and the web's), by `engine` (default: the one whose server program the
    launch runs, engine.api.launched_by); on a card the verdict's confidence comes from every source of measured
    launches (calibration/sources.py)."""
    from dataclasses import replace

    from hybridplan.calibration.sources import all_evidence
    from hybridplan.engine.api import for_engine, launched_by

    eng = for_engine(engine := launched_by(req.command, engine), version)
    _refuse_unused(engine, "explain", req, eng.takes("explain"), spell)
    payload = eng.explain(replace(req, evidence=all_evidence))
    return Explanation(payload=payload, engine=eng.name, engine_version=eng.version, command=_line(req.command))


def explain(command: Command, *, engine: str | None = None, engine_version: str | None = None, gpu: str | None = None,
            gpu_memory_gib: float | None = None, pool_budget_gib: float | None = None,
            available_gib: float | None = None, pre_load_gib: float | None = None, weights_gib: float | None = None,
            kv_memory_gib: float | None = None, hub: bool = False) -> Explanation:
    """What `engine` (at `engine_version`, default its newest modelled release) allocates for the launch `command`
    (one shell line, or its words) and why; with `gpu` (a catalog id; `gpu_memory_gib` overrides its memory or,
    alone, names a generic card), the memory timeline and the verdict. `hybridplan explain --json`.

    Raises BadInput (an option the engine does not take, a launch it cannot read) or EngineRefusal (the engine would
    not start; some refusals come back in `.refusal` with the numbers still computable)."""
    return run_explain(ExplainRequest(command=_words(command), gpu=gpu, gpu_memory_gib=_float(gpu_memory_gib),
                                      pool_budget_gib=_float(pool_budget_gib), available_gib=_float(available_gib),
                                      pre_load_gib=_float(pre_load_gib), weights_gib=_float(weights_gib),
                                      kv_memory_gib=_float(kv_memory_gib), hub=hub), engine, engine_version)


def run_plan(req: PlanRequest, engine: str | None = None, version: str | None = None, spell: Spell = str,
             extra_apart: bool = True) -> Plan:
    """`plan` on a built request; it stays clear of the launches the bundled pages record failing and takes its
    fraction ceiling from every source of measured launches. `extra_apart`: the caller gives a catalog launch's
    extra flags as `extra` (Python, the web), so a launch `command` beside `model` or `extra` is refused; the CLI
    passes False (its words after `--` are the launch, or the extra flags of --model)."""
    from dataclasses import replace

    from hybridplan.calibration.sources import all_evidence
    from hybridplan.cookbook.record_evidence import measured_failure
    from hybridplan.engine.api import for_engine, launched_by
    from hybridplan.errors import BadInput

    eng = for_engine(engine := launched_by(req.command, engine), version)
    _refuse_unused(engine, "plan", req, eng.takes("plan"), spell)
    if extra_apart and req.command is not None and (req.model is not None or req.extra is not None):
        raise BadInput("command: give the launch command or `model` (with `extra`), not both")
    payload = eng.plan(replace(req, measured=measured_failure, evidence=all_evidence))
    return Plan(payload=payload, engine=eng.name, engine_version=eng.version, request_length=req.request_length,
                concurrency=req.concurrency)


def plan(command: Command | None = None, *, request_length: int, concurrency: int, engine: str | None = None,
         engine_version: str | None = None, model: str | None = None, gpu: str | None = None,
         gpu_memory_gib: float | None = None, quant: str | None = None, spec: str | None = None,
         draft: str | None = None, tp: int = 1, extra: Command | None = None, max_mem_fraction: float | None = None,
         pin: bool = False, weights_gib: float | None = None, hub: bool = False, kv_memory_gib: float | None = None,
         max_util: float | None = None) -> Plan:
    """The fewest changes to the launch `command` (or to the catalog's launch of `model`, with `extra` env and flags)
    that serve `concurrency` requests of `request_length` tokens on `gpu`, each with its reason, or why none does
    and the cheapest change that would. `hybridplan plan --json`."""
    return run_plan(PlanRequest(request_length=request_length, concurrency=concurrency,
                                command=None if command is None else _words(command), model=model, gpu=gpu,
                                gpu_memory_gib=_float(gpu_memory_gib), quant=quant, spec=spec, draft=draft, tp=tp,
                                extra=None if extra is None else _words(extra),
                                max_mem_fraction=_float(max_mem_fraction), pin=pin, weights_gib=_float(weights_gib),
                                hub=hub, kv_memory_gib=_float(kv_memory_gib), max_util=_float(max_util)),
                    engine, engine_version)


def run_compare(req: CompareRequest, versions: Mapping[str, str | None] | None = None) -> Comparison:
    """`compare` on a built request (`versions`: the release of each engine to model, by name; the newest by
    default); each leg's verdict rests on every source of measured launches, as explain's, and the cheapest change
    of a leg that fails stays clear of the launches the bundled pages record failing, as plan's."""
    from dataclasses import replace

    from hybridplan.calibration.sources import all_evidence
    from hybridplan.cookbook.record_evidence import measured_failure
    from hybridplan.engine.api import engines, for_engine
    from hybridplan.planner.compare import compare_engines

    payload = compare_engines(replace(req, evidence=all_evidence, measured=measured_failure), versions)
    chosen = versions or {}
    return Comparison(payload=payload, versions={name: for_engine(name, chosen.get(name)).version
                                                 for name in engines()})


def compare(model: str | None = None, *, request_length: int, memory_gib: float | None = None,
            gpu: str | None = None, gpu_memory_gib: float | None = None, tp: int = 1, kv_cache_dtype: str = "auto",
            command: Command | None = None, engine: str = "sglang",
            versions: Mapping[str, str | None] | None = None) -> Comparison:
    """What every modelled engine serves of `model` at `request_length` tokens, from the same cache memory
    (`memory_gib` per rank) or from what each leaves on `gpu` (`gpu_memory_gib` overrides its memory or, alone,
    names a card by its memory), and why they differ; `versions` picks a release per engine (e.g.
    {"vllm": "0.24.0"}). With `command` (a launch of `engine`, instead of `model`, `tp` and `kv_cache_dtype`): that
    launch on its engine and its settings carried to the others, each leg saying what it carried and could not.
    Each leg carries its verdict and, where it fails on the card, the cheapest change. `hybridplan compare --json`."""
    return run_compare(CompareRequest(model=model, request_length=request_length, memory_gib=_float(memory_gib),
                                      tp=tp, kv_cache_dtype=kv_cache_dtype, gpu=gpu,
                                      gpu_memory_gib=_float(gpu_memory_gib),
                                      command=None if command is None else _words(command),
                                      launch_engine=None if command is None else engine), versions)


def read_log(path: str | os.PathLike[str]) -> str:
    """A boot log's text, or a one-line BadInput (not a regular file, unreadable, or over the size bound: all checked
    before reading). Bytes that are not UTF-8 are replaced: logs mix encodings."""
    from hybridplan.limits import MAX_LOG_BYTES
    from hybridplan.textfile import read_bytes

    return read_bytes(os.fspath(path), limit=MAX_LOG_BYTES).decode(errors="replace")


def run_check_log(req: LogCheckRequest, engine: str | None = None, name: str = "log",
                  spell: Spell = str) -> LogCheck:
    """`logs check` on a built request (`name`: what the log is called in the answer and in a refusal), by `engine`
    (default: the engine whose boot-log lines the log holds); a log holding none of the engine's lines but another's
    is refused naming that engine."""
    from hybridplan.engine.api import for_engine, refuse_foreign_log, written_by

    eng = for_engine(engine := written_by(req.log, engine))
    refuse_foreign_log(engine, req.log, name)
    _refuse_unused(engine, "logs", req, eng.takes("logs"), spell)
    return LogCheck(payload=eng.check_log(req, name=name), engine=eng.name, engine_version=req.engine_version)


def check_log(log: str | os.PathLike[str], command: Command | None = None, *, engine: str | None = None,
              engine_version: str | None = None, log_version: str | None = None, gpu: str | None = None) -> LogCheck:
    """A boot log (its text, or a path-like object to read it from) held against the engine model, with the launch
    that wrote it (`command`; vLLM reads it off the log when left out): each difference and the rule that explains
    it. `hybridplan logs check --json`."""
    is_path = isinstance(log, os.PathLike)
    text = read_log(log) if is_path else str(log)
    return run_check_log(LogCheckRequest(log=text, command=None if command is None else _words(command),
                                         log_version=log_version, engine_version=engine_version, gpu=gpu),
                         engine, name=os.fspath(log) if is_path else "log")
