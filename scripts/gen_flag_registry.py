"""Dump sglang 0.5.23 serve flags to JSON, so hybridplan need not import sglang."""

import argparse
import json
import os
import re
import sys

ENGINE = "sglang"
VERSION = "0.5.23"
GENERATOR = "scripts/gen_flag_registry.py"
PROG = "sglang serve"
HELP_MAX = 300

# Environment variables read while the parser is built change the registry
# (e.g. SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE adds a --sampling-backend choice).
# Drop them before sglang is imported so the output describes the stock engine.
_ENV_PREFIXES = ("SGLANG_", "SGL_")

_KINDS = {
    argparse._StoreAction: "value",
    argparse._StoreTrueAction: "store_true",
    argparse._StoreFalseAction: "store_false",
    argparse._StoreConstAction: "store_const",
    argparse.BooleanOptionalAction: "bool_optional",
    argparse._AppendAction: "append",
    argparse._AppendConstAction: "append_const",
    argparse._CountAction: "count",
    argparse._ExtendAction: "extend",
}
_TYPE_NAMES = {str: "str", int: "int", float: "float", bool: "bool"}


def _scrub_env():
    dropped = sorted(k for k in os.environ if k.startswith(_ENV_PREFIXES))
    for key in dropped:
        del os.environ[key]
    if dropped:
        print(f"ignoring environment: {', '.join(dropped)}", file=sys.stderr)


def build_parser():
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog=PROG)
    ServerArgs.add_cli_args(parser)
    return parser


def _kind(action):
    kind = _KINDS.get(type(action))
    return kind if kind is not None else type(action).__name__.lower()


def _type_name(fn):
    if fn is None:
        return None
    if fn in _TYPE_NAMES:
        return _TYPE_NAMES[fn]
    name = getattr(fn, "__name__", None)
    if name is None and hasattr(fn, "func"):  # functools.partial
        name = f"partial({getattr(fn.func, '__name__', type(fn.func).__name__)})"
    return name if name is not None else type(fn).__name__


def _plain(value):
    """Return a JSON value, or raise TypeError/ValueError if there is none."""
    if isinstance(value, (set, frozenset)):
        raise TypeError("unordered")
    json.dumps(value, allow_nan=False)
    return value


def _scalar(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _choices(choices):
    if choices is None:
        return None
    items = [_scalar(c) for c in choices]
    return sorted(items, key=lambda c: (type(c).__name__, c))


def _help(text):
    if text is None:
        return None
    return re.sub(r"\s+", " ", text).strip()[:HELP_MAX]


def _deprecated(action):
    info = {}
    for attr in ("new_flag", "const_value", "error_message"):
        if hasattr(action, attr):
            value = getattr(action, attr)
            if value is not None:
                info[attr] = _scalar(value)
    if not info and not type(action).__name__.startswith("Deprecated"):
        return None
    return info


def record(action):
    try:
        default, default_repr = _plain(action.default), False
    except (TypeError, ValueError):
        default, default_repr = repr(action.default), True
    try:
        const = _plain(action.const)
    except (TypeError, ValueError):
        const = repr(action.const)
    return {
        "dest": action.dest,
        "options": list(action.option_strings),
        "kind": _kind(action),
        "nargs": action.nargs,
        "type": _type_name(action.type),
        "choices": _choices(action.choices),
        "default": default,
        "default_repr": default_repr,
        "const": const,
        "deprecated": _deprecated(action),
        "help": _help(action.help),
        "required": bool(action.required),
    }


def field_fallbacks():
    """Resolvable fields' scalar fallbacks (`Arg(fallback=...)`): the value a None default takes after resolution."""
    import importlib
    import inspect
    import pkgutil

    import msgspec
    import sglang.srt.arg_groups.fields as fields_pkg
    from sglang.srt.arg_groups.arg_utils import fallbacks_of

    out = {}
    for info in pkgutil.iter_modules(fields_pkg.__path__):
        mod = importlib.import_module(f"{fields_pkg.__name__}.{info.name}")
        for obj in vars(mod).values():
            if inspect.isclass(obj) and issubclass(obj, msgspec.Struct) and obj.__module__ == mod.__name__:
                out.update(fallbacks_of(obj))
    return out


def registry(parser):
    fallbacks = field_fallbacks()
    seen = {}
    for action in parser._actions:
        for opt in action.option_strings:
            if opt in seen and seen[opt] is not action:
                raise SystemExit(
                    f"option {opt} shared by {seen[opt].dest} and {action.dest}"
                )
            seen[opt] = action
    flags = [
        record(a) for a in parser._actions if not isinstance(a, argparse._HelpAction)
    ]
    for f in flags:
        if f["dest"] in fallbacks:
            f["fallback"] = _plain(fallbacks[f["dest"]])
    flags.sort(key=lambda f: (f["dest"], f["options"][0] if f["options"] else ""))
    return {
        "engine": ENGINE,
        "version": VERSION,
        "generator": GENERATOR,
        "prog": PROG,
        "allow_abbrev": parser.allow_abbrev,
        "flags": flags,
    }


def main(argv=None):
    cli = argparse.ArgumentParser(description=__doc__)
    cli.add_argument("--out", required=True, help="path of the JSON file to write")
    args = cli.parse_args(argv)

    _scrub_env()
    import sglang

    installed = getattr(sglang, "__version__", None)
    if installed != VERSION:
        raise SystemExit(f"expected sglang {VERSION}, found {installed}")

    data = registry(build_parser())
    out_dir = os.path.dirname(args.out)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    print(f"wrote {len(data['flags'])} flags to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
