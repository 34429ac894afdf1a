"""What vLLM's `vllm serve` parser does around argparse, reimplemented: the spellings its FlexibleArgumentParser
rewrites before argparse sees them, and its own argument types (utils/argparse_utils.py, engine/arg_utils.py; the
same in every modelled release, 0.20.0 to 0.34.0).

- `--max_model_len` is `--max-model-len`: underscores become dashes between the leading `--` and the first `.`;
- `-O3`, `-O=3`, `-Odecode` and `-O 3` (a level 0-3 after a lone `-O`) are `--optimization-level <level>`;
- a dotted option (`--compilation-config.cudagraph_mode FULL`, `-cc.mode=3`, `--speculative-config.method mtp`) sets
  one key of a JSON-valued flag; the keys of one flag merge into one object handed to it last, as if typed as JSON
  (a key ending in `+` appends comma-separated values to a list);
- `1k` is 1,000 and `1K` 1,024 (human_readable_int: lower case decimal, upper case binary), `auto` and `-1` let
  --max-model-len fit the memory (human_readable_int_or_auto).

hybridplan refuses what it cannot size: a JSON value holding NaN, an infinity or an integer outside int64 is refused
by name (vLLM's parser passes them on).
"""

from __future__ import annotations

import json
import re
from argparse import ArgumentTypeError
from collections.abc import Callable
from typing import Any

from hybridplan.errors import BadInput
from hybridplan.jsontext import parse_json
from hybridplan.limits import MAX_JSON_DEPTH

_LEVELS = frozenset({"0", "1", "2", "3"})  # `-O <n>`: the levels a lone -O takes its next word as
_SUFFIXED = re.compile(r"(\d{1,40}(?:\.\d{1,40})?)([kKmMgGtT])")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
# a bare number with a suffix inside JSON text, outside its strings (engine/arg_utils.py::
# _expand_json_human_readable_numbers); string boundaries are found by _outside_strings
_JSON_SUFFIXED = re.compile(r"\b\d{1,40}(?:\.\d{1,40})?[kKmMgGtT]\b")
_STRING_EDGE = re.compile(r'\\.|"')


def human_readable_int(value: str) -> int:
    """utils/argparse_utils.py::human_readable_int: `25.6k` is 25,600, `1K` 1,024; decimals with a binary suffix are
    refused (ArgumentTypeError: its own words); anything else is Python's int() (ValueError: argparse's `invalid
    ... value`)."""
    value = value.strip()
    m = _SUFFIXED.fullmatch(value)
    if m:
        number, suffix = m.groups()
        if suffix in _DECIMAL:
            return int(float(number) * _DECIMAL[suffix])
        try:
            return int(number) * _BINARY[suffix]
        except ValueError:
            raise ArgumentTypeError(f"Decimals are not allowed with binary suffixes like {suffix}. Did you mean to use "
                              f"{number}{suffix.lower()} instead?") from None
    return int(value)


def human_readable_int_or_auto(value: str) -> int:
    """utils/argparse_utils.py::human_readable_int_or_auto: `-1` or `auto` (any case) is -1 (fit to the memory)."""
    value = value.strip()
    return -1 if value == "-1" or value.lower() == "auto" else human_readable_int(value)


def _outside_strings(text: str, edit: Callable[[str], str]) -> str:
    """`text` with `edit` applied to each stretch outside its JSON strings (one pass over the text)."""
    out, start, inside = [], 0, False
    for m in _STRING_EDGE.finditer(text):
        if m.group() != '"':
            continue  # an escape: inside a string it never ends one
        if not inside:
            out.append(edit(text[start:m.start()]))
            start = m.start()
        else:
            out.append(text[start:m.end()])
            start = m.end()
        inside = not inside
    out.append(text[start:] if inside else edit(text[start:]))
    return "".join(out)


def json_value(flag: str, *, numbers: bool = False) -> Callable[[str], Any]:
    """A JSON-valued flag's type (json.loads; with `numbers`, engine/arg_utils.py::parse_dataclass, which first
    expands `80g`-style numbers outside strings), bounded: nesting, int64, and no NaN or infinity, each refused
    naming the flag and the key."""

    def parse(raw: str) -> Any:
        text = _outside_strings(raw, lambda s: _JSON_SUFFIXED.sub(lambda m: str(human_readable_int(m.group())), s)) \
            if numbers else raw
        return parse_json(text, origin=f"argument {flag}", what="JSON", finite=True)

    return parse


def dict_or_str(flag: str) -> Callable[[str], Any]:
    """engine/arg_utils.py::union_dict_and_str: text shaped like a JSON object is one, anything else a string."""
    loads = json_value(flag)

    def parse(raw: str) -> Any:
        stripped = raw.strip()
        return loads(raw) if stripped.startswith("{") and stripped.endswith("}") else raw

    return parse


def flag_key(token: str) -> str:
    """utils/argparse_utils.py::FlexibleArgumentParser.parse_args: in a `--` word, underscores between the dashes and
    the first `.` become dashes (`--max_model_len=4k` is `--max-model-len=4k`; the value and dotted keys keep theirs)."""
    if not token.startswith("--"):
        return token
    key, eq, value = token.partition("=")
    name, dot, keys = key[2:].partition(".")
    return "--" + name.replace("_", "-") + dot + keys + eq + value


def _dotted_value(text: str) -> Any:
    """A dotted key's value: JSON, else a human-readable integer, else the text itself."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return human_readable_int(text)
    except (ValueError, ArgumentTypeError):
        return text


def _merge(into: dict[str, Any], update: dict[str, Any]) -> None:
    """recursive_dict_update: nested objects merge, lists concatenate, anything else is replaced."""
    for k, v in update.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        elif isinstance(v, list) and isinstance(into.get(k), list):
            into[k] += v
        else:
            into[k] = v


def rewrite(argv: list[str]) -> list[str]:
    """The words argparse sees once FlexibleArgumentParser has rewritten the spellings above (the dotted keys of each
    flag merged and appended last, as `<flag> <JSON>`). A dotted word with no value after it is refused."""
    words: list[str] = []
    for i, arg in enumerate(argv):
        if arg.startswith("--"):
            words.append(flag_key(arg))
        elif arg.startswith("-O") and arg != "-O":
            words += ["--optimization-level", arg[3:] if arg[2] == "=" else arg[2:]]
        elif arg == "-O" and i + 1 < len(argv) and argv[i + 1] in _LEVELS:
            words.append("--optimization-level")
        else:
            words.append(arg)
    kept: list[str] = []
    dotted: dict[str, dict[str, Any]] = {}
    skip = False
    for i, word in enumerate(words):
        if skip:
            skip = False
            continue
        if not (word.startswith("-") and "." in word):
            kept.append(word)
            continue
        name, eq, value = word.partition("=")
        if eq and "." not in name:
            kept.append(word)  # the dot was in the value
            continue
        if not eq:
            if i + 1 >= len(words):
                raise BadInput(f"argument {word}: expected one argument")
            value, skip = words[i + 1], True
        parsed = _dotted_value(value)
        if name.endswith("+"):
            name, parsed = name[:-1], value.split(",")
        flag, *keys = name.split(".", MAX_JSON_DEPTH)
        if len(keys) >= MAX_JSON_DEPTH:
            raise BadInput(f"argument {flag}: a dotted key nests deeper than {MAX_JSON_DEPTH} levels")
        nested: Any = parsed
        for key in reversed(keys):
            nested = {key: nested}
        _merge(dotted.setdefault(flag, {}), nested)
    for flag, merged in dotted.items():
        try:
            kept += [flag, json.dumps(merged)]
        except (RecursionError, ValueError):  # a value json.loads took deeper than json.dumps goes back
            raise BadInput(f"argument {flag}: a dotted value nests too deeply") from None
    return kept


def flag_converter(type_name: str | None, label: str) -> Callable[[str], Any] | None:
    """The converter vLLM's parser applies for a flag recorded with `type_name` (None: the registry's own)."""
    if type_name == "human_readable_int":
        return human_readable_int
    if type_name == "human_readable_int_or_auto":
        return human_readable_int_or_auto
    if type_name == "loads":
        return json_value(label)
    if type_name == "parse_dataclass":
        return json_value(label, numbers=True)
    if type_name == "union_dict_and_str":
        return dict_or_str(label)
    return None
