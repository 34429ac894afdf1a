"""Reading page YAML with line numbers: duplicate keys are errors, and any location maps back to its line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from hybridplan.errors import BadInput
from hybridplan.limits import MAX_YAML_ALIASES, MAX_YAML_DEPTH, MAX_YAML_NODES


class Unreadable(BadInput):
    """The file cannot be read or is not YAML (the validator exits 2 on it, not 1)."""


@dataclass(frozen=True)
class SchemaError:
    """One schema violation: where (location path and line) and what."""

    loc: tuple[Any, ...]
    line: int | None
    message: str


if TYPE_CHECKING:
    _Base = yaml.SafeLoader
else:
    _Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser and composer when PyYAML has them


def _refused(problem: str, event: yaml.Event) -> yaml.composer.ComposerError:
    """The composer's error for a document `_bounded` refuses, at the event's mark."""
    # libyaml's events carry yaml._yaml.Mark, which the stubs do not list for the error; it only formats the mark
    return yaml.composer.ComposerError(None, None, problem, event.start_mark)  # type: ignore[arg-type]


def _bounded(text: str) -> None:
    """Refuse a document whose aliases, nesting or alias-expanded node count pass the bounds (billion laughs), from
    its event stream (libyaml's iterative parser), before anything is composed or built: linear in the text."""
    aliases = 0
    sizes: dict[str, int] = {}  # anchor -> nodes under it, aliases expanded
    stack: list[list[Any]] = [[None, 0]]  # open collections: [anchor, nodes so far]
    for event in yaml.parse(text, Loader=_Base):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_YAML_ALIASES:
                raise _refused(f"more than {MAX_YAML_ALIASES} aliases", event)
            stack[-1][1] += sizes.get(event.anchor or "", 1)
        elif isinstance(event, yaml.ScalarEvent):
            stack[-1][1] += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            if len(stack) > MAX_YAML_DEPTH:
                raise _refused(f"nested deeper than {MAX_YAML_DEPTH} levels", event)
            stack.append([event.anchor, 1])
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, size = stack.pop()
            if anchor:
                sizes[anchor] = size
            stack[-1][1] += size
        else:
            continue
        if stack[-1][1] > MAX_YAML_NODES:  # a closed collection's nodes are in its parent's count
            raise _refused(f"more than {MAX_YAML_NODES:,} nodes once aliases are expanded", event)


class _Loader(_Base):
    """The safe loader (libyaml's where PyYAML has it) that refuses duplicate mapping keys (PyYAML silently keeps the
    last one); `_bounded` has already bounded aliases, nesting and the expanded size."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[str, Any] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *anchor` keys may be overridden by explicit ones
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key_node, yaml.ScalarNode):  # `? [a]` / `? {a: 1}` keys: unhashable, never page data
                raise yaml.constructor.ConstructorError(None, None, "a mapping key must be a plain value",
                                                        key_node.start_mark)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first on line {seen[key] + 1})", key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


@dataclass(frozen=True)
class SourceMap:
    """The composed YAML node tree of a file, to turn a location path into a line number."""

    origin: str
    root: yaml.Node | None

    def line(self, loc: tuple[Any, ...]) -> int | None:
        """1-based line of the deepest node the path reaches (unknown path elements, e.g. union tags, are skipped)."""
        node = self.root
        if node is None:
            return None
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                hit = next((v for k, v in node.value if k.value == part), None)
                if hit is not None:
                    node = hit
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
        return node.start_mark.line + 1


def parse_yaml(text: str, origin: str) -> tuple[Any, SourceMap]:
    """The data and its source map; YAML syntax errors and duplicate keys raise Unreadable with the line."""
    try:
        _bounded(text)
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark else ""
        problem = exc.problem or exc.context
        if problem and "maximum nesting depth" in problem:  # libyaml's scanner stops flow nesting past its own limit
            problem = f"nested deeper than {MAX_YAML_DEPTH} levels"
        raise Unreadable(f"{origin}{line}: not valid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise Unreadable(f"{origin}: not valid YAML: {exc}") from None
    return data, SourceMap(origin=origin, root=node)


def dotted(loc: tuple[Any, ...]) -> str:
    """`cells[3].match.quant` from ('cells', 3, 'match', 'quant')."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def schema_errors(exc: ValidationError, src: SourceMap) -> list[SchemaError]:
    """Pydantic errors as (location, line, message), one per violation."""
    out = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        elif err["type"] == "missing":
            msg = "required key is missing"
        out.append(SchemaError(loc=_readable_loc(loc), line=src.line(loc), message=msg))
    return out


def _readable_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop pydantic's union tags (a condition's `in` appears twice: tag, then field)."""
    out: list[Any] = []
    for part in loc:
        if out and part == out[-1] and isinstance(part, str):
            continue
        if isinstance(part, str) and (part.startswith("function-") or part in ("str", "branch", "bool")):
            continue
        out.append(part)
    return tuple(out)
