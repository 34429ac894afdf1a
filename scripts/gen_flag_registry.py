"""Dump sglang 0.5.23 serve flags to JSON, so hybridplan need not import sglang."""

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

ENGINE = "sglang"
VERSION = "0.5.23"
GENERATOR = "scripts/gen_flag_registry.py"
PROG = "sglang serve"

# Environment variables read while the parser is built change the registry
# (e.g. SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE adds a --sampling-backend choice).
# Drop them before sglang is imported so the output describes the stock engine.
_ENV_PREFIXES = ("SGLANG_", "SGL_")


def _flag_record():
    """conformance/flag_record.py, loaded by path: the oracle interpreter this runs in has no hybridplan package."""
    where = Path(__file__).resolve().parent.parent / "src/hybridplan/conformance/flag_record.py"
    spec = importlib.util.spec_from_file_location("flag_record", where)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_fr = _flag_record()
record, _plain = _fr.record, _fr.plain  # an action's record (gen_flag_history.py's too), a value as JSON


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
