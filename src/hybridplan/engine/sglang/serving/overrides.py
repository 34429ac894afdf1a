"""Resolved arguments with a few fields replaced, for searches that vary only sizing inputs (ratio, pin)."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any

from hybridplan.engine.sglang.args import Arg, EngineArgs
from hybridplan.provenance import Source


def with_args(args: EngineArgs, rule: str = "hybridplan planner", **values: Any) -> EngineArgs:
    """The same resolution with `values` as if typed. Only for fields no resolution rule reads (they feed sizing)."""
    merged = dict(args.args)
    for name, value in values.items():
        merged[name] = Arg(value=value, source=Source.EXPLICIT, rule=rule)
    return replace(args, args=MappingProxyType(merged))
