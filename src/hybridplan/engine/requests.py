"""What a surface asks an engine (explain, plan, logs check, compare), engine-neutral: every option any engine takes,
None where the user gave none. Each engine lists the options it takes (ServingEngine.takes); the edges refuse the
others by name before the engine runs (`unused`), so a flag one engine ignores is never silently dropped."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from hybridplan.engine import numbers
from hybridplan.engine.numbers import Bound
from hybridplan.errors import BadInput
from hybridplan.limits import MAX_GPU_GIB

_GIB = Bound(0, MAX_GPU_GIB, "GiB on one GPU", lo_open=True)
# The valid values of the request fields, defined once: the CLI's options (commands/options.py), the web's schemas
# (web/schemas.py) and the requests themselves (so an engine never sees another) all read them
FIELD_BOUNDS: dict[str, Bound] = {
    "kv_memory_gib": _GIB,  # a boot log's `Available KV cache memory`: vLLM refuses to start with none
    "memory_gib": _GIB,  # compare's cache memory per rank
    "max_util": Bound(0, 1, "a fraction of GPU memory", lo_open=True),  # vLLM's gpu_memory_utilization
    "others_gib": Bound(0, MAX_GPU_GIB, "GiB on one GPU"),  # the guard's reading of other processes' memory
}
FIELD_OPTIONS = {"kv_memory_gib": "--kv-memory-gib", "memory_gib": "--memory-gib", "max_util": "--max-util",
                 "others_gib": "others_gib"}


def _check_fields(request: object) -> None:
    """Each bounded field of a request finite and inside FIELD_BOUNDS (BadInput names it as the CLI spells it)."""
    for name, bound in FIELD_BOUNDS.items():
        value = getattr(request, name, None)
        if value is not None:
            numbers.check(value, FIELD_OPTIONS[name], bound, integer=False)


@dataclass(frozen=True, kw_only=True)
class ExplainRequest:
    """`explain`: a launch command and what sizes its memory (a card, a budget, a boot log's figures)."""

    command: str | tuple[str, ...]  # the launch as text or as the shell's tokens
    gpu: str | None = None
    gpu_memory_gib: float | None = None
    pool_budget_gib: float | None = None
    available_gib: float | None = None
    pre_load_gib: float | None = None
    weights_gib: float | None = None
    kv_memory_gib: float | None = None
    others_gib: float | None = None  # what other processes hold on the card (nvidia-smi), which a startup check counts
    hub: bool = False
    evidence: Callable[..., Any] | None = None  # evidence.EvidenceSource: the measured launches on a card
    expand_home: bool = False  # a `~` word expanded as a shell would (the CLI's one quoted string; never the web)

    def __post_init__(self) -> None:
        _check_fields(self)


@dataclass(frozen=True, kw_only=True)
class PlanRequest:
    """`plan`: the fewest changes to a launch (or the catalog's command for `model`) that serve C requests of L."""

    request_length: int
    concurrency: int
    command: str | tuple[str, ...] | None = None
    model: str | None = None
    gpu: str | None = None
    gpu_memory_gib: float | None = None
    quant: str | None = None
    spec: str | None = None
    draft: str | None = None
    tp: int = 1
    extra: str | tuple[str, ...] | None = None  # with `model`: extra env and flags for the catalog command
    max_mem_fraction: float | None = None
    pin: bool = False
    weights_gib: float | None = None
    hub: bool = False
    kv_memory_gib: float | None = None
    max_util: float | None = None
    measured: Callable[..., Any] | None = None  # evidence.FailureLookup: measured launches that failed
    evidence: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        _check_fields(self)


@dataclass(frozen=True, kw_only=True)
class LogCheckRequest:
    """`logs check`: a boot log, the launch that wrote it (or what the log states of it), and the card."""

    log: str
    command: str | tuple[str, ...] | None = None
    log_version: str | None = None
    engine_version: str | None = None  # the release to model, over the one the log states
    gpu: str | None = None
    expand_home: bool = False


@dataclass(frozen=True, kw_only=True)
class RatioRequest:
    """`ratio`: the state/KV balance for L-token requests and the pin for C of them."""

    command: str | tuple[str, ...]
    request_length: int
    concurrency: int
    pool_budget_gib: float | None = None
    gpu: str | None = None
    gpu_memory_gib: float | None = None
    expand_home: bool = False


@dataclass(frozen=True, kw_only=True)
class Speculative:
    """Speculative decoding as every engine can state it: the method (mtp: the checkpoint's own MTP/NextN block;
    eagle, eagle3, dflash, dspark: a draft checkpoint; ngram), the draft and the tokens drafted per step."""

    method: str
    draft: str | None = None
    tokens: int | None = None


@dataclass(frozen=True, kw_only=True)
class LaunchSettings:
    """What a launch states in terms every engine shares (compare carries them from one engine's launch to another's
    launch), None where the launch leaves the engine's default, and the flags it sets with no shared counterpart."""

    model: str
    tp: int = 1
    context_length: int | None = None
    kv_cache_dtype: str = "auto"  # auto, fp8, bfloat16, float16
    state_dtype: str | None = None  # the recurrent (SSM) state's dtype
    quantization: str | None = None
    speculative: Speculative | None = None
    max_running_requests: int | None = None
    prefill_chunk: int | None = None  # tokens one prefill step takes (chunked prefill / batched tokens)
    prefix_caching: bool | None = None
    own: tuple[tuple[str, str], ...] = ()  # (the flag as typed, why no other engine has it)


@dataclass(frozen=True, kw_only=True)
class CompareRequest:
    """`compare`: one model at one request length, from the same cache memory or from what each engine leaves on a
    card; each engine at its own defaults, or from one engine's whole launch (`command`, for `launch_engine`) carried
    to the others as far as they have the same settings."""

    model: str | None = None  # with `command`: the launch names it
    request_length: int
    memory_gib: float | None = None
    tp: int = 1
    kv_cache_dtype: str = "auto"
    gpu: str | None = None
    gpu_memory_gib: float | None = None  # the card's memory (alone: a card known by its memory)
    command: str | tuple[str, ...] | None = None
    launch_engine: str | None = None  # the engine `command` launches
    settings: LaunchSettings | None = None  # what `command` states in shared terms (compare fills it in)
    measured: Callable[..., Any] | None = None  # as PlanRequest's: for the cheapest change of a leg that fails
    evidence: Callable[..., Any] | None = None  # as ExplainRequest's: what each verdict's confidence rests on

    def __post_init__(self) -> None:
        _check_fields(self)


@dataclass(frozen=True, kw_only=True)
class CompareLaunch:
    """The launch compare runs on one engine: the user's own where it is this engine's, else one carried over from
    the shared settings, with what it carried, what it added and what it could not carry."""

    command: str
    carried: tuple[str, ...] = ()  # "--from x -> --to y"
    added: tuple[str, ...] = ()  # flags compare adds, each with why
    not_carried: tuple[str, ...] = ()  # flags the other engine's launch sets that this engine has no counterpart for

    def as_dict(self, source: str | None) -> dict[str, Any]:
        return {"from": source, "carried": list(self.carried), "added": list(self.added),
                "not_carried": list(self.not_carried)}


def own_launch(req: CompareRequest, engine: str) -> CompareLaunch | None:
    """The user's own launch, as typed, where it is engine `engine`'s (compare runs it unchanged there)."""
    if req.command is None or req.launch_engine != engine:
        return None
    return CompareLaunch(command=req.command if isinstance(req.command, str) else shlex.join(req.command))


def shared_settings(req: CompareRequest) -> LaunchSettings:
    """What compare carries to an engine whose launch the user did not give: the other launch's shared settings,
    else the model at compare's request length, TP and KV dtype."""
    return req.settings or LaunchSettings(model=req.model or "", tp=req.tp, kv_cache_dtype=req.kv_cache_dtype,
                                          context_length=req.request_length)


_DEFAULTS: dict[type, Mapping[str, Any]] = {}  # each request type's field defaults (read once)


def given(request: object, ignore: Iterable[str] = ()) -> list[str]:
    """The options a request sets away from their defaults (what the user gave), in field order."""
    cls = type(request)
    if cls not in _DEFAULTS:
        _DEFAULTS[cls] = {f.name: f.default for f in fields(request)}  # type: ignore[arg-type]
    skip = set(ignore)
    return [name for name, default in _DEFAULTS[cls].items()
            if name not in skip and getattr(request, name) != default]


def unused(request: object, takes: frozenset[str], engine: str, takers: Callable[[str], list[str]],
           spell: Callable[[str], str] = str) -> None:
    """Refuse the first option `engine` does not take, by the name the edge spells it with, naming the engines that
    do take it (BadInput: the CLI's exit 2, the web's 400)."""
    for name in given(request, ignore=("evidence", "measured", "expand_home")):
        if name not in takes:
            others = [e for e in takers(name) if e != engine]
            only = f" (only with {', '.join(f'`engine: {e}`' for e in others)})" if others else ""
            raise BadInput(f"{spell(name)}: not taken with `engine: {engine}`{only}")


@dataclass(frozen=True, kw_only=True)
class CompareLeg:
    """One engine's answer to `compare`, in its own terms (`leg`, the JSON under the engine's name) and in the terms
    the comparison lines share: its cache memory and where it came from, why it serves what it serves, and what one
    request holds on one rank."""

    leg: dict[str, Any]
    cache_memory_gib: float | None  # None where the engine refuses before it sizes its caches
    pools: str  # how its cache memory is held ("its two pools", "its one pool")
    memory_source: str
    why: str
    request_bytes: int | None  # one request at the length on one rank
    state_bytes: int | None  # of it, the recurrent state
    state_words: str  # what the state is held in ("state", "state pages")
    serves: bool | None = None  # the verdict on the card (None: no card, or not decidable)


# ------------------------------------------------------------------------------------------------ fleet
