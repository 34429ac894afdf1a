"""Write src/hybridplan/engine/vllm/flags.json: vLLM's `vllm serve` parser (make_arg_parser) recorded flag by flag.

Maintainer script, run by the vLLM oracle interpreter (conformance/setup_vllm_oracle.sh prints its command):
the release's own parser is built with the oracle driver's stand-ins (no GPU) and every action is recorded exactly
as scripts/gen_flag_registry.py records sglang's. vLLM's argument types are named by what they parse:
`optional_type(int)` -> "int", `human_readable_int_or_auto` -> "human_readable_int" (the engine model maps
`auto` to -1 first).
Usage: PYTHONPATH=<release>:<deps> <oracle python> scripts/gen_vllm_flag_registry.py > src/hybridplan/engine/vllm/flags.json
(an older release: > src/hybridplan/engine/vllm/flags-<version>.json)
"""

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import gen_flag_registry as g  # noqa: E402


def _driver():
    """conformance/vllm/driver.py as the oracle interpreter runs it (launch.py: no hybridplan package there)."""
    spec = importlib.util.spec_from_file_location("launch", ROOT / "src/hybridplan/conformance/launch.py")
    launch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch)
    return launch.load("vllm.driver")


def _type_name(fn):
    inner = getattr(fn, "__closure__", None)
    if getattr(fn, "__name__", "") == "_optional_type" and inner:
        return g._type_name(inner[0].cell_contents)
    if getattr(fn, "__name__", "") == "human_readable_int_or_auto":
        return "human_readable_int"
    return g._type_name(fn)


def main():
    driver = _driver()
    vllm = driver.prepare()
    parser = driver.serve_parser()
    flags = []
    for action in parser._actions:
        if not action.option_strings and action.dest != "model_tag":
            continue
        rec = g.record(action)
        rec["type"] = _type_name(action.type)
        flags.append(rec)
    flags.sort(key=lambda f: (f["dest"], f["options"][0] if f["options"] else ""))
    out = {"engine": "vllm", "version": vllm.__version__, "prog": "vllm serve", "allow_abbrev": parser.allow_abbrev,
           "generator": "scripts/gen_vllm_flag_registry.py", "flags": flags}
    json.dump(out, sys.stdout, indent=0, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
