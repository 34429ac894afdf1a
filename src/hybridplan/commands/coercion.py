"""typer's value coercion without pydantic for the plain values a command line carries (CLI start-up).

typer (0.2x) converts every parameter, an absent option included, through a pydantic TypeAdapter it builds on first
use: importing pydantic and building those adapters was a third of a cold `explain`. A str, a list of str, an int
written as plain digits and a float written as plain decimals need none of it, and come out here exactly as the
adapter gives them (tests/test_cli_coercion.py holds the two side by side). Anything else (a Path, a bound, a
spelling such as '1e3', ' 5' or '1_000', a non-str value) goes to typer's own adapter: its value, its error message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, get_args, get_origin

try:  # typer >= 0.2x coerces through pydantic; older typer uses click's types and needs nothing here
    from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
    from typer.core import _TyperParameter
except ImportError:  # pragma: no cover - older typer
    RuntimeParam = None  # type: ignore[assignment,misc]

_INT = re.compile(r"-?[0-9]{1,18}")
_FLOAT = re.compile(r"-?[0-9]{1,15}(?:\.[0-9]{1,15})?")
DECLINED = object()  # `plain` leaves the value to typer's adapter


def plain(annotation: Any, value: Any) -> Any:
    """`value` as typer's adapter for `annotation` (str, bool, int, float, list[str]) returns it, or DECLINED."""
    if annotation is str:
        return value if type(value) is str else DECLINED
    if annotation is bool:  # typer skips a bool already; an absent flag (the help option: None) never gets here
        return value if type(value) is bool else DECLINED
    if annotation is int:
        if type(value) is int:
            return value
        return int(value) if type(value) is str and _INT.fullmatch(value) else DECLINED
    if annotation is float:
        if type(value) is float:
            return value
        return float(value) if type(value) is str and _FLOAT.fullmatch(value) else DECLINED
    if get_origin(annotation) is list and get_args(annotation) == (str,):
        if isinstance(value, (list, tuple)) and all(type(v) is str for v in value):
            return list(value)
    return DECLINED


def _handled(descriptor: Any) -> bool:
    """A parameter `plain` can serve: no parser, no bounds or clamp, no file."""
    info = descriptor.parameter_info
    if descriptor.file_annotation is not None or info.parser is not None:
        return False
    if info.min is not None or info.max is not None or info.clamp:
        return False
    ann = descriptor.annotation
    return ann in (str, bool, int, float) or (get_origin(ann) is list and get_args(ann) == (str,))


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class _Plain(RuntimeParam):
        """typer's RuntimeParam for a plain parameter: `plain` first, typer's own adapter for what it declines."""

        descriptor: TypeDescriptor

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            out = plain(self.annotation, value)
            if out is DECLINED:
                return build_runtime_param(self.descriptor)._coerce_value(value, param, ctx)
            return out


def install(command: Any) -> None:
    """Give every plain parameter of `command` and its subcommands the pydantic-free coercion (before it runs).

    The help option is made when a context first asks for it (its names come from the context), so it gets the
    coercion then.
    """
    if RuntimeParam is None:  # pragma: no cover - older typer
        return
    for param in command.params:
        _plain_param(param)
    help_option = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = help_option(ctx)
        if option is not None:
            _plain_param(option)
        return option

    command.get_help_option = get_help_option
    for sub in getattr(command, "commands", {}).values():
        install(sub)


def _plain_param(param: Any) -> None:
    if isinstance(param, _TyperParameter) and param._runtime_param is None and _handled(param.type_descriptor):
        d = param.type_descriptor
        param._runtime_param = _Plain(parameter_info=d.parameter_info, annotation=d.annotation, descriptor=d)
