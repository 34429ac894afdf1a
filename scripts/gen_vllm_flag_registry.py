"""Write src/hybridplan/engine/vllm/flags.json and flag_history.json: every modelled vLLM release's `vllm serve`
parser (make_arg_parser), the newest recorded flag by flag, the others as the flag history.

Maintainer script, run by the project's interpreter: for each release of engine/vllm/behaviours.py it asks the
parser oracle's driver (conformance/vllm/parse_driver.py, in the oracle interpreter with that release beside it:
conformance/setup_vllm_oracle.sh unpacks it) for the release's flag records: each action recorded as sglang's are
(conformance/flag_record.py), plus the hidden `aliases` and a boolean's `negatives`, vLLM's own argument types with a
`vllm_` prefix (engine/vllm/flexible.py converts them). The history is scripts/gen_flag_history.py's shape: for each
release a -> b, the records b added, the ones a had that b removed, and a's records of flags whose parsing changed
(help text ignored), so a release whose parser is its predecessor's costs an empty step and
engine/registry.py::rewind gives any release's registry back. scripts/record_oracles.py records the same flag records
(conformance/recorded/vllm-parser-<version>.json.gz), which tests/conformance/test_vllm_parser_conformance.py compares
with the registry written here.
Usage: python scripts/gen_vllm_flag_registry.py [--python PYTHON]
(PYTHON: the oracle interpreter, $HYBRIDPLAN_ORACLE_PYTHON, else .oracle-venv/bin/python)
"""

import argparse
import json
import os
import sys
from pathlib import Path

from hybridplan.conformance.oracle import oracle
from hybridplan.conformance.runner import run_oracle
from hybridplan.conformance.vllm.parser import FLAGS

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src/hybridplan/engine/vllm"
GENERATOR = "scripts/gen_vllm_flag_registry.py"
sys.path.insert(0, str(ROOT / "scripts"))


def dump(python: str, version: str) -> dict:
    """The release's registry, from its own parser in the oracle interpreter."""
    header, answers = run_oracle(oracle("vllm-parser"), python, [{"id": FLAGS, "flags": True}], version=version)
    return {"engine": "vllm", "version": header["version"], "prog": "vllm serve",
            "allow_abbrev": answers[FLAGS]["allow_abbrev"], "generator": GENERATOR, "flags": answers[FLAGS]["flags"]}


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--python", default=os.environ.get("HYBRIDPLAN_ORACLE_PYTHON")
                     or str(ROOT / ".oracle-venv" / "bin" / "python"))
    args = cli.parse_args(argv)
    import gen_flag_history as h

    from hybridplan.engine.vllm.behaviours import RELEASES

    regs = [dump(args.python, v) for v in RELEASES]
    if any(r["allow_abbrev"] != regs[-1]["allow_abbrev"] for r in regs):
        raise SystemExit("allow_abbrev differs between releases: the history does not record it")
    (OUT / "flags.json").write_text(json.dumps(regs[-1], indent=0, ensure_ascii=False) + "\n")
    history = {"engine": "vllm", "base": regs[-1]["version"], "generator": GENERATOR,
               "releases": [h.delta(a, b) for a, b in zip(regs, regs[1:])]}
    (OUT / "flag_history.json").write_text(h.render(history))
    sizes = ", ".join(f"{d['to']}: +{len(d['added'])} -{len(d['removed'])} ~{len(d['changed'])}"
                      for d in history["releases"])
    print(f"wrote flags.json ({regs[-1]['version']}) and flag_history.json ({sizes})", file=sys.stderr)


if __name__ == "__main__":
    main()
