"""Reading page YAML with line numbers: duplicate keys are errors, and any location maps back to its line."""

from __future__ import annotations

from dataclasses import dataclass

import yaml
from pydantic import ValidationError

from hybridplan.errors import BadInput
from hybridplan.limits import MAX_YAML_ALIASES, MAX_YAML_DEPTH, MAX_YAML_NODES


class Unreadable(BadInput):
    """The file cannot be read or is not YAML (the validator exits 2 on it, not 1)."""


@dataclass(frozen=True)
class SchemaError:
    """One schema violation: where (location path and line) and what."""

    loc: tuple
    line: int | None
    message: str


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys (PyYAML silently keeps the last one), and bounds aliases,
    nesting and the node count once aliases are expanded (billion laughs), while composing, before any data is built."""

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0
        self._expanded: dict[int, int] = {}  # id(node) -> nodes under it with aliases expanded

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise yaml.composer.ComposerError(None, None, f"more than {MAX_YAML_ALIASES} aliases",
                                                  self.peek_event().start_mark)
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > MAX_YAML_DEPTH:
            raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels",
                                              self.peek_event().start_mark)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        children = node.value if isinstance(node, yaml.SequenceNode) else (
            [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else [])
        size = 1 + sum(self._expanded.get(id(c), 1) for c in children)
        if size > MAX_YAML_NODES:
            raise yaml.composer.ComposerError(None, None, f"more than {MAX_YAML_NODES:,} nodes once aliases are "
                                              "expanded", node.start_mark)
        self._expanded[id(node)] = size
        return node

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
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

    def line(self, loc: tuple) -> int | None:
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


def parse_yaml(text: str, origin: str) -> tuple[object, SourceMap]:
    """The data and its source map; YAML syntax errors and duplicate keys raise Unreadable with the line."""
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark else ""
        raise Unreadable(f"{origin}{line}: not valid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise Unreadable(f"{origin}: not valid YAML: {exc}") from None
    return data, SourceMap(origin=origin, root=node)


def dotted(loc: tuple) -> str:
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


def _readable_loc(loc: tuple) -> tuple:
    """Drop pydantic's union tags (a condition's `in` appears twice: tag, then field)."""
    out: list = []
    for part in loc:
        if out and part == out[-1] and isinstance(part, str):
            continue
        if isinstance(part, str) and (part.startswith("function-") or part in ("str", "branch", "bool")):
            continue
        out.append(part)
    return tuple(out)
