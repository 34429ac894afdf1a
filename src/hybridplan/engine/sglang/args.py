"""Resolved engine arguments: each value knows whether it was typed, defaulted or derived, and by which rule."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from hybridplan.engine.sglang.behaviours import Switches, switches
from hybridplan.hardware.platform import Platform as Platform
from hybridplan.errors import BadInput
from hybridplan.limits import MAX_INT
from hybridplan.provenance import Source


@dataclass(frozen=True, kw_only=True)
class Arg:
    """One resolved argument."""

    value: Any
    source: Source  # EXPLICIT, DEFAULT or DERIVED
    rule: str = ""  # the engine function that set or rewrote it

    def as_dict(self) -> dict[str, Any]:
        out = {"value": self.value, "source": self.source.value}
        if self.rule:
            out["rule"] = self.rule
        return out


@dataclass(frozen=True)
class EngineArgs:
    """The arguments one engine version holds after its resolution pipeline, keyed by the engine's field names."""

    version: str
    args: Mapping[str, Arg]
    env: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # warnings the engine's resolution would log

    def __getitem__(self, name: str) -> Any:
        return self.args[name].value

    @property
    def switches(self) -> Switches:
        """The release's behaviour switches (engine/sglang/behaviours.py), which sizing reads with these args."""
        return switches(self.version)

    def get(self, name: str, default: Any = None) -> Any:
        arg = self.args.get(name)
        return default if arg is None else arg.value

    def arg(self, name: str) -> Arg:
        return self.args[name]

    def explicit(self, name: str) -> bool:
        arg = self.args.get(name)
        return arg is not None and arg.source is Source.EXPLICIT

    def env_bool(self, name: str, default: bool = False) -> bool:
        return env_bool(self.env, name, default)

    def env_int(self, name: str, default: int) -> int:
        """An env var read like environ.py::EnvInt (an invalid value falls back to the default); a value outside
        int64 is refused, since the engine would hand it to C++."""
        try:
            value = int(self.env[name])
        except (KeyError, ValueError):
            return default
        if abs(value) > MAX_INT:
            raise BadInput(f"env {name}: {value} is outside int64")
        return value

    def as_dict(self, names: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
        keys = names if names is not None else tuple(self.args)
        return {k: self.args[k].as_dict() for k in keys if k in self.args}


def env_bool(env: Mapping[str, str], name: str, default: bool = False) -> bool:
    """An env var read like environ.py::EnvBool (true/1/yes/y, false/0/no/n; anything else: the default)."""
    raw = env.get(name)
    if raw is None:
        return default
    value = raw.lower()
    if value in ("true", "1", "yes", "y"):
        return True
    if value in ("false", "0", "no", "n"):
        return False
    return default


def freeze(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only copy (resolved args, env) for the frozen EngineArgs."""
    return MappingProxyType(dict(values))
