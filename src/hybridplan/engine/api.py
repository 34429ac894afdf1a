"""The one engine API: what every modelled engine offers the layers above it.

`for_engine(name, version)` is the only place an engine's name becomes an engine: a `ServingEngine`, the one
protocol explain, plan, logs check, ratio, compare and the web ask (each answers in its own terms, as the JSON
payload its surface prints), with the neutral requests of `engine.requests`. `releases(name)` lists what is
modelled and `engines()` the engines, in the order they are shown. The engine packages themselves
(`engine/sglang/`, `engine/vllm/`) are reached only from here (an import-linter contract in pyproject.toml).

The layers that work in sglang's own terms (the SGLang docs cookbook pages, the calibration on its boot logs)
also find its launch, resolved-argument and pool types and its serving functions re-exported here.
"""

from __future__ import annotations

from importlib import import_module
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hybridplan.engine.release import EngineRelease as EngineRelease, ServingEngine as ServingEngine
from hybridplan.engine.verdict import Verdict as Verdict
from hybridplan.errors import BadInput
from hybridplan.hardware.platform import Platform as Platform

# sglang's launch, resolved arguments, pool types and rules surface, for the layers that work in its terms
from hybridplan.engine.sglang.args import Arg as Arg, EngineArgs as EngineArgs
from hybridplan.engine.sglang.behaviours import (Switches as Switches, check_version as check_version,
                                                 profile as profile)
from hybridplan.engine.sglang.command import LaunchCommand as LaunchCommand, parse_command as parse_command
from hybridplan.engine.sglang.protocol import Engine as Engine
from hybridplan.engine.sglang.releases import DEFAULT as DEFAULT, SUPPORTED as SUPPORTED
from hybridplan.engine.sglang.releases import for_version as for_version, release_of as release_of
from hybridplan.engine.sglang.types import (KVCell as KVCell, PoolBudget as PoolBudget, PoolSizing as PoolSizing,
                                            RequestCap as RequestCap, StateAllocation as StateAllocation,
                                            StatePlan as StatePlan)


# each engine: (the module that knows its releases: SUPPORTED, oldest first; its serving factory)
_ENGINES = {"sglang": ("hybridplan.engine.sglang.releases", "hybridplan.engine.sglang.serving.surface"),
            "vllm": ("hybridplan.engine.vllm.engine", "hybridplan.engine.vllm.serving.surface")}


def engines() -> tuple[str, ...]:
    """The modelled engines, in the order the surfaces show them."""
    return tuple(_ENGINES)


def _known(name: str) -> tuple[str, str]:
    if name not in _ENGINES:
        raise BadInput(f"--engine: {name!r} is not modelled ({', '.join(_ENGINES)})")
    return _ENGINES[name]


def releases(name: str) -> tuple[str, ...]:
    """The releases of engine `name` hybridplan models, oldest first."""
    return tuple(import_module(_known(name)[0]).SUPPORTED)


def builds(name: str) -> tuple[str, ...]:
    """The named builds between releases engine `name` models as themselves (a cookbook page pins one), if any."""
    return tuple(getattr(import_module(_known(name)[0]), "BUILDS", ()))


def default_release(name: str) -> str:
    """The release of engine `name` a launch is modelled by when none is named."""
    return str(import_module(_known(name)[0]).DEFAULT)


def for_engine(name: str, version: str | None = None) -> ServingEngine:
    """Engine `name` at release `version` (default: default_release(name); a version string the engine does not
    model is modelled by a release of its own choosing, with a note)."""
    engine: ServingEngine = import_module(_known(name)[1]).serving(version)
    return engine


def _claimed(asked: str | None, claims: Callable[[ServingEngine], bool]) -> str:
    """`asked` (--engine) when given, else the first engine that claims the input, else the first engine."""
    if asked is not None:
        _known(asked)
        return asked
    return next((name for name in _ENGINES if claims(for_engine(name))), engines()[0])


def launched_by(command: str | tuple[str, ...] | None, asked: str | None = None) -> str:
    """The engine a launch is for: `asked` (--engine) when given, else the engine whose server program the command
    runs (`vllm serve ...`), else the first engine (a bare flag list, or no command)."""
    return _claimed(asked, lambda engine: bool(command) and engine.launches(command or ""))


def written_by(text: str, asked: str | None = None) -> str:
    """The engine a boot log is from: `asked` (--engine) when given, else the first engine whose boot-log lines it
    holds, else the first engine (whose check then names the lines it lacks)."""
    return _claimed(asked, lambda engine: engine.writes(text))


def refuse_foreign_log(name: str, text: str, what: str = "log") -> None:
    """BadInput (before any parsing) when `text` holds none of engine `name`'s boot-log lines but another engine's:
    the log was written by that one, which the refusal names."""
    engine = for_engine(name)
    if engine.writes(text):
        return
    other = next((for_engine(e) for e in _ENGINES if e != name and for_engine(e).writes(text)), None)
    if other is not None:
        raise BadInput(f"{what}: holds none of {engine.display_name}'s boot-log lines but {other.display_name}'s: "
                       f"check it with --engine {other.name} (`engine: {other.name}`)")


def takers(field: str, surface: str) -> list[str]:
    """The engines whose `surface` takes request field `field` (what a refusal names)."""
    return [name for name in _ENGINES if field in for_engine(name).takes(surface)]


# sglang's serving functions the sglang-shaped layers call (loaded on first use: they read configs and checkpoints)
if TYPE_CHECKING:
    from hybridplan.engine.sglang.loads import EAGLE_FAMILY as EAGLE_FAMILY, weights_query as weights_query
    from hybridplan.engine.sglang.serving.loading import Loaded as Loaded, load as load
    from hybridplan.engine.sglang.serving.timeline import MemoryTimeline as MemoryTimeline, for_loaded as for_loaded, context_estimate_gib as context_estimate_gib, visible_estimate as visible_estimate
    from hybridplan.engine.sglang.serving.verdict import predict as predict
    from hybridplan.engine.sglang.serving.constants import constants_for as constants_for, host_names as host_names
    from hybridplan.engine.sglang.serving.plan import MeasuredFailure as MeasuredFailure
    from hybridplan.engine.sglang.serving.ratio import balanced_ratio as balanced_ratio
    from hybridplan.engine.sglang.serving.explain import explain as explain
    from hybridplan.engine.sglang.serving.logcheck import check_log as check_log
    from hybridplan.engine.sglang.logparse import BootLog as BootLog, parse_log as parse_log
    from hybridplan.engine.sglang.failures import Failure as Failure

_SGLANG_SERVING = {
    "EAGLE_FAMILY": "hybridplan.engine.sglang.loads",
    "weights_query": "hybridplan.engine.sglang.loads",
    "Loaded": "hybridplan.engine.sglang.serving.loading",
    "load": "hybridplan.engine.sglang.serving.loading",
    "MemoryTimeline": "hybridplan.engine.sglang.serving.timeline",
    "for_loaded": "hybridplan.engine.sglang.serving.timeline",
    "context_estimate_gib": "hybridplan.engine.sglang.serving.timeline",
    "visible_estimate": "hybridplan.engine.sglang.serving.timeline",
    "predict": "hybridplan.engine.sglang.serving.verdict",
    "constants_for": "hybridplan.engine.sglang.serving.constants",
    "host_names": "hybridplan.engine.sglang.serving.constants",
    "MeasuredFailure": "hybridplan.engine.sglang.serving.plan",
    "balanced_ratio": "hybridplan.engine.sglang.serving.ratio",
    "explain": "hybridplan.engine.sglang.serving.explain",
    "check_log": "hybridplan.engine.sglang.serving.logcheck",
    "BootLog": "hybridplan.engine.sglang.logparse",
    "parse_log": "hybridplan.engine.sglang.logparse",
    "Failure": "hybridplan.engine.sglang.failures",
}


def __getattr__(name: str) -> Any:
    """sglang's serving functions and types, imported when first asked for (keeps `import engine.api` light)."""
    if name in _SGLANG_SERVING:
        return getattr(import_module(_SGLANG_SERVING[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:  # mypy holds each engine's surface to the protocol (for_engine builds them by module name)
    from hybridplan.engine.sglang.serving.surface import SglangServing
    from hybridplan.engine.vllm.serving.surface import VllmServing

    _SERVING: tuple[type[ServingEngine], ...] = (SglangServing, VllmServing)
