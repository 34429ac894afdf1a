"""The typed results of the Python API: each wraps the JSON payload the CLI's `--json` prints and the web returns
(`payload`, `to_json()`), with typed accessors for the fields every engine's payload shares. Frozen: the accessors
read the payload, they never recompute it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


def dumps(obj: Any) -> str:
    """JSON as `--json` prints it (indented; a value JSON has no type for as its text; a NaN or infinity is a
    BadInput naming its field: jsontext.dumps)."""
    from hybridplan.jsontext import dumps as guarded

    return guarded(obj, indent=2)


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """Does the launch boot and serve on the card, and if not, in which phase it fails and why."""

    serves: bool
    phase: str | None  # weights, state_pool, kv_pool, cuda_graph, first_request; startup: the engine refuses the launch
    message: str
    confidence: str | None = None  # calibrated, extrapolated, ...: what the verdict rests on (evidence.py)
    evidence: str | None = None  # the measured launch it rests on and how far from it
    rule: str | None = None  # the engine rule behind a refusal

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Verdict:
        """From a payload's `verdict` object."""
        conf = data.get("confidence")
        level, note = (conf.get("level"), conf.get("note")) if isinstance(conf, Mapping) else (conf, None)
        return cls(serves=bool(data["serves"]), phase=data.get("phase"), message=str(data.get("why") or ""),
                   confidence=level, evidence=note, rule=data.get("rule"))

    @classmethod
    def refused(cls, error: Mapping[str, Any]) -> Verdict:
        """An engine refusal (a payload's `error`, or EngineRefusal.as_dict()): the launch fails at startup."""
        return cls(serves=False, phase="startup", message=f"the engine refuses: {error['message']}",
                   rule=error.get("rule"))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class _Answer:
    payload: dict[str, Any] = field(repr=False)  # what `--json` prints

    def to_json(self) -> str:
        """The payload as `--json` prints it."""
        return dumps(self.payload)


@dataclass(frozen=True, kw_only=True)
class Explanation(_Answer):
    """`explain`: what the engine allocates for the launch and why; on a card, whether it serves."""

    engine: str
    engine_version: str
    command: str  # the launch explained, as one shell line

    @property
    def refusal(self) -> dict[str, Any] | None:
        """The engine's refusal (message, rule, type) where it refuses the launch after resolving it."""
        error = self.payload.get("error")
        return dict(error) if isinstance(error, Mapping) else None

    @property
    def verdict(self) -> Verdict | None:
        """The verdict on the card (None without one, or where the engine model gives none): the payload's
        `verdict`, else the memory timeline's, else the engine's refusal."""
        memory = self.payload.get("memory")
        found = self.payload.get("verdict") or (memory.get("verdict") if isinstance(memory, Mapping) else None)
        if found:
            return Verdict.of(found)
        refusal = self.refusal
        return Verdict.refused(refusal) if refusal is not None else None

    @property
    def exit_code(self) -> int:
        """The CLI's exit: 3 where the engine refuses the launch, else 0."""
        return 3 if self.refusal is not None else 0


@dataclass(frozen=True, kw_only=True)
class Plan(_Answer):
    """`plan`: the fewest changes to a launch that serve C requests of L tokens on a card, or why none does."""

    engine: str
    engine_version: str
    request_length: int
    concurrency: int

    @property
    def fits(self) -> bool:
        return bool(self.payload["fits"])

    @property
    def command(self) -> str | None:
        """The planned launch (None when nothing fits)."""
        command = self.payload.get("command")
        return None if command is None else str(command)

    @property
    def exit_code(self) -> int:
        """The CLI's exit: 0 a launch fits, 1 none does."""
        return 0 if self.fits else 1


@dataclass(frozen=True, kw_only=True)
class Comparison(_Answer):
    """`compare`: one model at one request length on every modelled engine, and why they differ."""

    versions: Mapping[str, str]  # each engine compared -> the release modelled

    @property
    def engines(self) -> tuple[str, ...]:
        return tuple(self.versions)

    def leg(self, engine: str) -> dict[str, Any]:
        """One engine's side, in its own terms."""
        leg: dict[str, Any] = self.payload[engine]
        return leg

    def verdict(self, engine: str) -> Verdict | None:
        """One engine's verdict on the card, or its refusal (None: no card and no refusal, or the engine model
        does not cover the launch)."""
        found = self.leg(engine).get("verdict")
        return Verdict.of(found) if isinstance(found, Mapping) else None

    def cheapest_change(self, engine: str) -> dict[str, Any] | None:
        """Where an engine does not serve on the card: the change its plan makes (`change`, the `command` it gives,
        what it `reaches`), or the cheapest one that would."""
        fix = self.leg(engine).get("cheapest_change")
        return dict(fix) if isinstance(fix, Mapping) else None

    @property
    def why(self) -> list[str]:
        return list(self.payload["why"])

    @property
    def exit_code(self) -> int:
        """The CLI's exit: 0, also where an engine would not start (each engine's answer is the comparison's; a
        launch refused while it is read still raises)."""
        return 0


@dataclass(frozen=True, kw_only=True)
class LogCheck(_Answer):
    """`logs check`: a boot log held against the engine model, each difference with the rule that explains it."""

    engine: str
    engine_version: str | None  # the release asked for (None: the one the log states)

    @property
    def explained(self) -> bool:
        return bool(self.payload["explained"])

    @property
    def exit_code(self) -> int:
        """The CLI's exit: 0 every difference explained, 1 one is not."""
        return 0 if self.explained else 1
