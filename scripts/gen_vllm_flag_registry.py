"""Write src/hybridplan/engine/vllm/flags.json and flag_history.json: every modelled vLLM release's `vllm serve`
parser (make_arg_parser), the newest recorded flag by flag, the others as the flag history.

Maintainer script, run by the project's interpreter: for each release of engine/vllm/behaviours.py it runs itself
in the oracle interpreter (`--one`) with that release on PYTHONPATH (conformance/setup_vllm_oracle.sh unpacks it),
where the release's own parser is built with the oracle driver's stand-ins (no GPU) and every action is recorded
exactly as scripts/gen_flag_registry.py records sglang's, plus what argparse takes beyond the help's options:
`aliases`, the option strings registered for the action but hidden (EnableDisableAction's `--no-enable-x`), and
`negatives`, a boolean action's option strings that set it False. vLLM's argument types are named by what they parse:
`optional_type(int)` and `parse_type(json.loads)` by the function they wrap ("int", "loads"); vLLM's own
`human_readable_int` and `human_readable_int_or_auto` (k/m/g/t decimal, K/M/G/T binary: not sglang's
human_readable_int) keep their names with a `vllm_` prefix (engine/vllm/flexible.py converts them). The history is
scripts/gen_flag_history.py's shape: for each release a -> b, the records b added, the ones
a had that b removed, and a's records of flags whose parsing changed (help text ignored), so a release whose parser
is its predecessor's costs an empty step and engine/registry.py::rewind gives any release's registry back.
Usage: python scripts/gen_vllm_flag_registry.py [--venv /work/main/.oracle-venv]
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src/hybridplan/engine/vllm"
sys.path.insert(0, str(ROOT / "scripts"))


def _type_name(g, fn):
    inner = getattr(fn, "__closure__", None)
    if getattr(fn, "__name__", "") in ("_optional_type", "_parse_type") and inner:
        return _type_name(g, inner[0].cell_contents)
    if getattr(fn, "__name__", "") in ("human_readable_int", "human_readable_int_or_auto"):
        return f"vllm_{fn.__name__}"
    return g._type_name(fn)


def _hidden_and_negative(parser, action):
    """The option strings argparse takes for `action` beyond its (help-visible) options, and those that set a
    boolean action False (EnableDisableAction keeps them in negative_option_strings; BooleanOptionalAction: --no-)."""
    taken = [s for s, a in parser._option_string_actions.items() if a is action]
    hidden = sorted(s for s in taken if s not in action.option_strings)
    if not isinstance(action, argparse.BooleanOptionalAction):
        return hidden, []
    negative = getattr(action, "negative_option_strings", None)
    if negative is None:
        negative = [s for s in taken if s.startswith("--no-")]
    return hidden, sorted(s for s in taken if s in negative)


def one():
    """The registry of the release on sys.path, as JSON on stdout (runs in the oracle interpreter)."""
    sys.path.insert(0, str(ROOT / "src/hybridplan/conformance"))
    import gen_flag_registry as g
    import vllm_oracle_driver as driver

    out_stream, sys.stdout = sys.stdout, sys.stderr  # an older release's logger writes to stdout at import (0.24.0)
    vllm = driver.prepare()
    parser = driver.serve_parser()
    sys.stdout = out_stream
    flags = []
    for action in parser._actions:
        if not action.option_strings and action.dest != "model_tag":
            continue
        rec = g.record(action)
        rec["type"] = _type_name(g, action.type)
        rec["aliases"], rec["negatives"] = _hidden_and_negative(parser, action)
        flags.append(rec)
    flags.sort(key=lambda f: (f["dest"], f["options"][0] if f["options"] else ""))
    out = {"engine": "vllm", "version": vllm.__version__, "prog": "vllm serve", "allow_abbrev": parser.allow_abbrev,
           "generator": "scripts/gen_vllm_flag_registry.py", "flags": flags}
    json.dump(out, sys.stdout, indent=0, ensure_ascii=False)
    sys.stdout.write("\n")


def dump(venv: Path, version: str) -> dict:
    """The release's registry, from its own parser in the oracle interpreter."""
    line = subprocess.run(["bash", str(ROOT / "conformance/setup_vllm_oracle.sh"), str(venv), version],
                          capture_output=True, text=True, check=True).stdout.splitlines()[-1]
    python, pythonpath = line.split()
    proc = subprocess.run([python, __file__, "--one"], env={**os.environ, "PYTHONPATH": pythonpath},
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"vllm {version}: {proc.stderr.strip().splitlines()[-1:]}")
    data = json.loads(proc.stdout)
    if data["version"] != version:
        raise SystemExit(f"vllm {version}'s files import vllm {data['version']}")
    return data


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--venv", default=str(ROOT / ".oracle-venv"))
    cli.add_argument("--one", action="store_true", help="print the registry of the release on PYTHONPATH")
    args = cli.parse_args(argv)
    if args.one:
        one()
        return
    sys.path.insert(0, str(ROOT / "src"))
    import gen_flag_history as h

    from hybridplan.engine.vllm.behaviours import RELEASES

    regs = [dump(Path(args.venv), v) for v in RELEASES]
    if any(r["allow_abbrev"] != regs[-1]["allow_abbrev"] for r in regs):
        raise SystemExit("allow_abbrev differs between releases: the history does not record it")
    (OUT / "flags.json").write_text(json.dumps(regs[-1], indent=0, ensure_ascii=False) + "\n")
    history = {"engine": "vllm", "base": regs[-1]["version"], "generator": "scripts/gen_vllm_flag_registry.py",
               "releases": [h.delta(a, b) for a, b in zip(regs, regs[1:])]}
    (OUT / "flag_history.json").write_text(h.render(history))
    sizes = ", ".join(f"{d['to']}: +{len(d['added'])} -{len(d['removed'])} ~{len(d['changed'])}"
                      for d in history["releases"])
    print(f"wrote flags.json ({regs[-1]['version']}) and flag_history.json ({sizes})", file=sys.stderr)


if __name__ == "__main__":
    main()
