"""Write src/hybridplan/engine/vllm/flags.json: vLLM's `vllm serve` parser (make_arg_parser) recorded flag by flag.

Maintainer script, run by the vLLM oracle interpreter (conformance/setup_vllm_oracle.sh prints its command):
the release's own parser is built with the oracle driver's stand-ins (no GPU) and every action is recorded exactly
as scripts/gen_flag_registry.py records sglang's, plus what argparse takes beyond the help's options: `aliases`,
the option strings registered for the action but hidden (EnableDisableAction's `--no-enable-x`), and `negatives`,
a boolean action's option strings that set it False. vLLM's argument types are named by what they parse:
`optional_type(int)` and `parse_type(json.loads)` by the function they wrap ("int", "loads"),
`human_readable_int_or_auto` by its own name.
Usage: PYTHONPATH=<release>:<deps> <oracle python> scripts/gen_vllm_flag_registry.py > src/hybridplan/engine/vllm/flags.json
(an older release: > src/hybridplan/engine/vllm/flags-<version>.json)
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "src/hybridplan/conformance"))

import gen_flag_registry as g  # noqa: E402
import vllm_oracle_driver as driver  # noqa: E402


def _type_name(fn):
    inner = getattr(fn, "__closure__", None)
    if getattr(fn, "__name__", "") in ("_optional_type", "_parse_type") and inner:
        return _type_name(inner[0].cell_contents)
    return g._type_name(fn)


def _hidden_and_negative(parser, action):
    """The option strings argparse takes for `action` beyond its (help-visible) options, and those that set a
    boolean action False (EnableDisableAction keeps them in negative_option_strings; BooleanOptionalAction: --no-)."""
    import argparse

    taken = [s for s, a in parser._option_string_actions.items() if a is action]
    hidden = sorted(s for s in taken if s not in action.option_strings)
    if not isinstance(action, argparse.BooleanOptionalAction):
        return hidden, []
    negative = getattr(action, "negative_option_strings", None)
    if negative is None:
        negative = [s for s in taken if s.startswith("--no-")]
    return hidden, sorted(s for s in taken if s in negative)


def main():
    vllm = driver.prepare()
    parser = driver.serve_parser()
    flags = []
    for action in parser._actions:
        if not action.option_strings and action.dest != "model_tag":
            continue
        rec = g.record(action)
        rec["type"] = _type_name(action.type)
        rec["aliases"], rec["negatives"] = _hidden_and_negative(parser, action)
        flags.append(rec)
    flags.sort(key=lambda f: (f["dest"], f["options"][0] if f["options"] else ""))
    out = {"engine": "vllm", "version": vllm.__version__, "prog": "vllm serve", "allow_abbrev": parser.allow_abbrev,
           "generator": "scripts/gen_vllm_flag_registry.py", "flags": flags}
    json.dump(out, sys.stdout, indent=0, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
