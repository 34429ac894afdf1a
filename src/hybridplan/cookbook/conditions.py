"""The declarative condition language over a selection: data, never evaluated code.

A condition is one of (YAML forms):

    true | false                           constant
    {equals: {dim: option, ...}}           every listed dim has that option
    {in: {dim: [option, ...], ...}}        every listed dim has one of those options
    {prefix: {dim: text, ...}}             every listed dim's option id starts with that text
    {not: <condition>}
    {all: [<condition>, ...]}              (empty: true)
    {any: [<condition>, ...]}              (empty: false)

The docs' Deploy engine expresses these as JavaScript predicates `(sel) => ...`; keeping them as data lets the
validator check that every dim and option a condition names exists (the docs' quant-id drift, #36020 / #38611).
"""

from __future__ import annotations

from typing import Annotated, Any, Iterator, Mapping, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

Selection = Mapping[str, str]

_KEYS = ("equals", "in", "prefix", "not", "all", "any")


class _Cond(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    def holds(self, sel: Selection) -> bool:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def refs(self) -> Iterator[tuple[str, str, str]]:
        """(kind, dim, value) for every option reference: kind is `id` (must be an option id) or `prefix`."""
        return iter(())


class Equals(_Cond):
    equals: dict[str, str] = Field(min_length=1)

    def holds(self, sel: Selection) -> bool:
        return all(sel.get(d) == v for d, v in self.equals.items())

    def refs(self) -> Iterator[tuple[str, str, str]]:
        return (("id", d, v) for d, v in self.equals.items())


class In(_Cond):
    in_: dict[str, list[str]] = Field(alias="in", min_length=1)

    def holds(self, sel: Selection) -> bool:
        return all(sel.get(d) in vs for d, vs in self.in_.items())

    def refs(self) -> Iterator[tuple[str, str, str]]:
        return (("id", d, v) for d, vs in self.in_.items() for v in vs)


class Prefix(_Cond):
    prefix: dict[str, str] = Field(min_length=1)

    def holds(self, sel: Selection) -> bool:
        return all(str(sel.get(d, "")).startswith(p) for d, p in self.prefix.items())

    def refs(self) -> Iterator[tuple[str, str, str]]:
        return (("prefix", d, p) for d, p in self.prefix.items())


class Not(_Cond):
    not_: "Condition" = Field(alias="not")

    def holds(self, sel: Selection) -> bool:
        return not evaluate(self.not_, sel)

    def refs(self) -> Iterator[tuple[str, str, str]]:
        return refs(self.not_)


class All(_Cond):
    all: list["Condition"]

    def holds(self, sel: Selection) -> bool:
        return all(evaluate(c, sel) for c in self.all)

    def refs(self) -> Iterator[tuple[str, str, str]]:
        return (r for c in self.all for r in refs(c))


class AnyOf(_Cond):
    any: list["Condition"]

    def holds(self, sel: Selection) -> bool:
        return any(evaluate(c, sel) for c in self.any)

    def refs(self) -> Iterator[tuple[str, str, str]]:
        return (r for c in self.any for r in refs(c))


def _tag(value: Any) -> str | None:
    """The union member a raw condition selects: `bool`, or its single key."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, _Cond):
        tags: dict[type[_Cond], str] = {Equals: "equals", In: "in", Prefix: "prefix", Not: "not", All: "all",
                                        AnyOf: "any"}
        return tags[type(value)]
    if isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
        return key if key in _KEYS else None
    return None


Condition = Annotated[
    Union[
        Annotated[bool, Tag("bool")],
        Annotated[Equals, Tag("equals")],
        Annotated[In, Tag("in")],
        Annotated[Prefix, Tag("prefix")],
        Annotated[Not, Tag("not")],
        Annotated[All, Tag("all")],
        Annotated[AnyOf, Tag("any")],
    ],
    Discriminator(
        _tag,
        custom_error_type="condition",
        custom_error_message="a condition is true/false or a mapping with exactly one of the keys "
                             "equals, in, prefix, not, all, any",
    ),
]

for _model in (Not, All, AnyOf):
    _model.model_rebuild()


def evaluate(cond: "Condition", sel: Selection) -> bool:
    """Whether a condition holds for a selection (a missing dim never equals anything)."""
    return cond if isinstance(cond, bool) else cond.holds(sel)


def refs(cond: "Condition") -> Iterator[tuple[str, str, str]]:
    return iter(()) if isinstance(cond, bool) else cond.refs()



def describe(cond: "Condition") -> str:
    """A condition in words, for exports: `hw = rtx5090 and quant does not start with 'nvfp4'`."""
    if isinstance(cond, bool):
        return "always" if cond else "never"
    if isinstance(cond, Equals):
        return " and ".join(f"{d} = {v}" for d, v in cond.equals.items())
    if isinstance(cond, In):
        return " and ".join(f"{d} in {{{', '.join(vs)}}}" for d, vs in cond.in_.items())
    if isinstance(cond, Prefix):
        return " and ".join(f"{d} starts with {p!r}" for d, p in cond.prefix.items())
    if isinstance(cond, Not):
        return f"not ({describe(cond.not_)})"
    parts = cond.all if isinstance(cond, All) else cond.any
    joiner = " and " if isinstance(cond, All) else " or "
    return joiner.join(f"({describe(c)})" if isinstance(c, (All, AnyOf)) else describe(c) for c in parts) or (
        "always" if isinstance(cond, All) else "never")
