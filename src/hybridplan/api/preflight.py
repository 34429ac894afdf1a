"""The guard's decision (`hybridplan guard`, `hybridplan.preflight`): the verdict on the exact launch on the card, and
what to run: the launch unchanged when it serves, the planner's fewest-change launch (with `fix`) when it fails and
that one serves, or nothing.

The launch is what a container runs: leading NAME=value words (a shell's assignments) and then the program's argv.
Explain sees it with the variables of the process environment the engine's rules read (ServingEngine.environment)
under the launch's own assignments, as the engine will. The outcome is

- `serves`: the verdict says the launch boots and serves on the card (and no other process holds memory on it);
- `fails`: the verdict says it fails in a phase, or the engine refuses it at startup (EngineRefusal); with `fix`, also
  when no planned launch serves the launch's own workload, or the planned one fails too;
- `unknown`: there is no verdict (the engine model cannot size the launch or gives no verdict on a card, or other
  processes hold memory the verdict does not count); the caller decides (the CLI: --on-unknown).

The fix plans for the workload the launch states (ServingEngine.workload): L its context length (the flag, else the
model's), C its request cap (the flag, else 1); `request_length` / `concurrency` override them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from hybridplan.api.results import Plan, Verdict, dumps

if TYPE_CHECKING:
    from hybridplan.engine.release import ServingEngine
    from hybridplan.hardware.detect import DetectedCard

Outcome = Literal["serves", "fails", "unknown"]
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True, kw_only=True)
class Launch:
    """A launch as a container runs it: its leading NAME=value assignments and the program's argv."""

    env: tuple[tuple[str, str], ...] = ()
    argv: tuple[str, ...] = ()

    @classmethod
    def of(cls, words: Sequence[str]) -> Launch:
        words = list(words)
        n = next((i for i, w in enumerate(words) if not _ASSIGNMENT.match(w)), len(words))
        return cls(env=tuple((w.partition("=")[0], w.partition("=")[2]) for w in words[:n]), argv=tuple(words[n:]))

    def words(self, under: Mapping[str, str] | None = None) -> tuple[str, ...]:
        """The launch as words, its assignments over the variables `under` (the environment it runs in)."""
        env = {**(under or {}), **dict(self.env)}
        return (*(f"{k}={v}" for k, v in env.items()), *self.argv)

    def line(self) -> str:
        return shlex.join(self.words())


@dataclass(frozen=True, kw_only=True)
class Preflight:
    """The guard's decision on a launch: the outcome, the verdict it rests on, and the launch to run."""

    outcome: Outcome
    engine: str
    engine_version: str
    card: str  # the card judged on
    given: Launch
    launch: Launch | None  # what to run: `given`, or the fix; None when the outcome is not `serves`
    verdict: Verdict | None
    reason: str  # why: the verdict's message, or why there is none
    fix: Plan | None = field(default=None, repr=False)  # the planner's answer for the launch's workload, on a failure
    fix_launch: Launch | None = None  # its planned launch, where one fits
    fix_verdict: Verdict | None = None  # the verdict on the planned launch, where it is run
    changes: tuple[tuple[str | None, str | None], ...] = ()  # the flags the fix sets differently (before, after)
    notes: tuple[str, ...] = ()

    @property
    def fixed(self) -> bool:
        """The launch to run is the planned fix."""
        return self.launch is not None and self.launch is self.fix_launch

    def as_dict(self) -> dict[str, Any]:
        fix = None if self.fix is None else {
            "request_length": self.fix.request_length, "concurrency": self.fix.concurrency, "fits": self.fix.fits,
            "command": None if self.fix_launch is None else self.fix_launch.line(),
            "why": self.fix.payload.get("why"), "cheapest_change": self.fix.payload.get("cheapest_change")}
        return {"outcome": self.outcome, "engine": self.engine, "engine_version": self.engine_version,
                "card": self.card, "command": self.given.line(),
                "launch": None if self.launch is None else self.launch.line(), "fixed": self.fixed,
                "verdict": None if self.verdict is None else self.verdict.as_dict(), "reason": self.reason,
                "fix": fix, "fix_verdict": None if self.fix_verdict is None else self.fix_verdict.as_dict(),
                "changes": [list(c) for c in self.changes], "notes": list(self.notes)}

    def to_json(self) -> str:
        return dumps(self.as_dict())


@dataclass(frozen=True)
class _Card:
    """The card the verdict is asked on (a catalog id and/or a memory), its label, and what others hold on it."""

    gpu: str | None
    gpu_memory_gib: float | None
    label: str
    others_mib: int | None = 0


def _card(gpu: str | None, gpu_memory_gib: float | None, environ: Mapping[str, str]) -> _Card:
    """`detect`: nvidia-smi's card; else the named one, checked against the catalog before any engine runs."""
    if gpu == "detect" or (gpu is None and gpu_memory_gib is None):
        from hybridplan.hardware.detect import detect

        found: DetectedCard = detect(environ)
        return _Card(found.gpu, found.gpu_memory_gib if gpu_memory_gib is None else gpu_memory_gib, found.label(),
                     found.others_mib)
    from hybridplan.hardware.catalog import from_options

    from_options(gpu, gpu_memory_gib)  # BadInput: an unknown id or a bad memory
    return _Card(gpu, gpu_memory_gib, gpu if gpu is not None else f"a {gpu_memory_gib:g} GiB card")


def _judge(words: tuple[str, ...], card: _Card, engine: str, version: str) -> tuple[Verdict | None, str]:
    """The verdict on the launch's words on the card, or None and why there is none."""
    from hybridplan.api.calls import run_explain
    from hybridplan.engine.requests import ExplainRequest
    from hybridplan.errors import BadInput, EngineRefusal

    from hybridplan.engine.api import for_engine

    # an engine whose startup counts other processes' memory (vLLM's free-memory check) is told what they hold
    counted = card.others_mib is not None and "others_gib" in for_engine(engine, version).takes("explain")
    try:
        explained = run_explain(ExplainRequest(command=words, gpu=card.gpu, gpu_memory_gib=card.gpu_memory_gib,
                                               others_gib=(card.others_mib or 0) / 1024 if counted else None),
                                engine, version)
    except EngineRefusal as exc:
        verdict: Verdict | None = Verdict.refused(exc.as_dict())
    except BadInput as exc:
        return None, f"the engine model cannot judge the launch: {exc.message}"
    else:
        verdict = explained.verdict
    if verdict is None:
        return None, f"{engine} {version}'s explain gives no verdict for the launch on a card"
    if verdict.serves and card.others_mib != 0 and not counted:
        held = "memory nvidia-smi does not report" if card.others_mib is None else f"{card.others_mib} MiB"
        return None, (f"it serves on an otherwise empty card, but other processes hold {held} of it, which the "
                      "verdict does not count")
    return verdict, verdict.message


def _workload(eng: ServingEngine, words: tuple[str, ...], request_length: int | None,
              concurrency: int | None) -> tuple[int | None, int]:
    """L and C for the fix: the caller's, else the launch's own (C 1 where it caps nothing)."""
    if request_length is not None and concurrency is not None:
        return request_length, concurrency
    length, cap = eng.workload(words)
    return (request_length if request_length is not None else length,
            concurrency if concurrency is not None else cap or 1)


def preflight(command: Sequence[str], *, gpu: str | None = "detect", gpu_memory_gib: float | None = None,
              engine: str = "sglang", engine_version: str | None = None, fix: bool = False,
              request_length: int | None = None, concurrency: int | None = None,
              environ: Mapping[str, str] | None = None) -> Preflight:
    """The guard's decision on the launch `command` (its words: NAME=value assignments, then the program's argv) on
    the card: `gpu` a catalog id (`gpu_memory_gib` overrides its memory; alone, a card known by its memory) or
    "detect" (nvidia-smi on environ's PATH); `environ` the environment the launch runs in (default this process's).
    With `fix`, a failing launch is replaced by the planner's fewest-change launch for its own workload
    (`request_length` / `concurrency` override what the launch states) when that one serves.

    Raises BadInput for the guard's own inputs (no launch, an unknown engine, release or card, no card to read);
    what the engine model cannot judge is the `unknown` outcome."""
    import os

    from hybridplan.engine.api import for_engine
    from hybridplan.errors import BadInput

    environ = os.environ if environ is None else environ
    given = Launch.of(command)
    if not given.argv:
        raise BadInput("guard: no launch command; put it after `--`, e.g. `hybridplan guard --gpu h100-80gb -- "
                       "python -m sglang.launch_server --model-path Qwen/Qwen3.5-27B`")
    eng = for_engine(engine, engine_version)
    card = _card(gpu, gpu_memory_gib, environ)
    under = eng.environment(environ)
    verdict, reason = _judge(given.words(under), card, eng.name, eng.version)
    out = Preflight(outcome="unknown" if verdict is None else "serves" if verdict.serves else "fails",
                    engine=eng.name, engine_version=eng.version, card=card.label, given=given, launch=None,
                    verdict=verdict, reason=reason)
    if verdict is None or verdict.serves:
        return replace(out, launch=given if verdict is not None else None)
    out = _with_fix(out, eng, card, under, request_length, concurrency)
    if not fix or out.fix_launch is None:
        return out
    then, why = _judge(out.fix_launch.words(under), card, eng.name, eng.version)
    if then is None or not then.serves:
        return replace(out, notes=(*out.notes, f"the planned launch is not run: {why}"))
    return replace(out, outcome="serves", launch=out.fix_launch, fix_verdict=then)


def _with_fix(out: Preflight, eng: ServingEngine, card: _Card, under: Mapping[str, str], request_length: int | None,
              concurrency: int | None) -> Preflight:
    """A failing launch's decision with the planner's answer for its workload, the planned launch and what it
    changes (or why there is none)."""
    from hybridplan.api.calls import run_plan
    from hybridplan.engine.argv import differences
    from hybridplan.engine.requests import PlanRequest
    from hybridplan.errors import HybridPlanError

    words = out.given.words(under)
    try:
        length, requests = _workload(eng, words, request_length, concurrency)
        if length is None:
            return replace(out, notes=("no fix: the launch states no context length (the engine fits it at "
                                       "startup); give --request-length",))
        planned = run_plan(PlanRequest(request_length=length, concurrency=requests, command=words, gpu=card.gpu,
                                       gpu_memory_gib=card.gpu_memory_gib), eng.name, eng.version)
    except HybridPlanError as exc:
        return replace(out, notes=(f"no fix: {exc.message}",))
    if planned.command is None:
        return replace(out, fix=planned)
    launch = Launch.of(shlex.split(planned.command))
    return replace(out, fix=planned, fix_launch=launch,
                   changes=tuple(differences(out.given.argv, launch.argv, eng.registry())))
