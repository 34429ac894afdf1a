"""The docs' own structural rules for a config module (docs/scripts/check_cookbook_configs.mjs, restated), applied to
its Node evaluation: one `export const config` literal with no spreads, calls or IIFEs at data level; legacy dims
complete; cell matches keyed on exactly the declared dims with declared options; `nnodes` on every cell when there
is no nodes dim; overlay defaults that exist; predicates and builders that never throw on a selection and return
what the panel expects.
"""

from __future__ import annotations

import re
from typing import Any

from hybridplan.cookbook.docs.node_eval import Evaluation
from hybridplan.cookbook.docs.view import LEGACY, STATUSES

_STRING_OR_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`", re.S)


def _sources(value: object) -> list[str]:
    """Every function's source text in the evaluated data."""
    if isinstance(value, dict):
        if "$fn" in value or "$getter" in value:
            return [str(value.get("$fn") or value.get("$getter"))]
        return [s for v in value.values() for s in _sources(v)]
    if isinstance(value, list):
        return [s for v in value for s in _sources(v)]
    return []


def _data_level(ev: Evaluation) -> str:
    """The module text with function bodies, comments and strings taken out: what the literal itself is made of."""
    text = ev.source
    for src in sorted(set(_sources(ev.data)), key=len, reverse=True):
        text = text.replace(src, "null")
    return _STRING_OR_COMMENT.sub("null", text)


def literal_rules(ev: Evaluation) -> list[str]:
    """The single-literal rule: one export, no spreads, calls or IIFEs outside functions."""
    out = []
    rest = _data_level(ev)
    exports = re.findall(r"\bexport\b", rest)
    if len(exports) != 1 or not re.search(r"\bexport\s+const\s+config\s*=\s*\{", rest):
        out.append("the module is not a single `export const config = {...}` literal")
    if "..." in rest:
        out.append("a spread at data level (outside a function)")
    if re.search(r"[\w\)\]]\s*\(", rest.replace("export const config", "")):
        out.append("a call or IIFE at data level (outside a function)")
    return out


def structure_rules(ev: Evaluation) -> list[str]:
    d = ev.data
    out = []
    custom = isinstance(d.get("matchDims"), list)
    if not custom:
        out += [f"legacy config is missing `{k}`" for k, _ in LEGACY if not isinstance(d.get(k), list)]
    match_dims: list[Any] = (d.get("matchDims") or []) if custom else [{"id": i, "options": d.get(k) or []} for k, i in LEGACY]
    ids = ["hw"] + [str(m.get("id")) for m in match_dims if isinstance(m, dict)]
    for i, cell in enumerate(d.get("cells") or []):
        keys = sorted((cell.get("match") or {}).keys())
        if keys != sorted(ids):
            out.append(f"cells[{i}].match keys {keys} != declared dims {sorted(ids)}")
        for m in match_dims if custom else []:
            v = (cell.get("match") or {}).get(m.get("id"))
            if not any(isinstance(o, dict) and o.get("id") == v for o in m.get("options") or []):
                out.append(f"cells[{i}].match.{m.get('id')}={v!r} is not an option of that dim")
        if custom and "nodes" not in ids and "nnodes" not in cell:
            out.append(f"cells[{i}] has no `nnodes` and the config declares no nodes dim")
    for dim in d.get("overlayDims") or []:
        opts = [o.get("id") for o in dim.get("options") or [] if isinstance(o, dict)]
        if dim.get("kind") != "number" and "default" in dim and dim["default"] not in opts:
            out.append(f"overlayDims.{dim.get('id')}.default={dim['default']!r} is not one of {opts}")
    return out


def function_rules(ev: Evaluation) -> list[str]:
    """Predicates and builders over the whole selection space: no throws, the right kinds of values."""
    out = []
    for f in ev.functions:
        where = ".".join(str(x) for x in f["path"])
        key = f["path"][-1]
        for v in f["values"]:
            why = None
            if isinstance(v, dict) and "$error" in v:
                why = f"throws: {v['$error']}"
            elif key == "verificationStatus" and not (v in STATUSES or (isinstance(v, dict) and "$undefined" in v)):
                why = f"returned {v!r}, expected one of {list(STATUSES)}"
            elif key in ("flags", "env", "hints") and not (isinstance(v, dict) and "$undefined" in v):
                if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
                    why = f"returned {v!r}, expected an array of strings"
                elif any(re.search("undefined|NaN", s) for s in v):
                    why = f"produced {next(s for s in v if re.search('undefined|NaN', s))!r}"
            elif key == "curl" and not isinstance(v, str):
                why = "curl returned a non-string"
            if why:
                out.append(f"{where} {why}")
                break
    return out


def docs_rules(ev: Evaluation) -> list[str]:
    """Every docs rule the module breaks (empty: it passes)."""
    return literal_rules(ev) + structure_rules(ev) + function_rules(ev) + list(ev.errors)
