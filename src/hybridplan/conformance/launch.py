"""Start an oracle driver in the oracle interpreter: `python launch.py <driver> < scenarios > answers`, the driver
named as a module of this directory (`vllm.driver`, `vllm.parse_driver`: conformance/oracle.py's Oracle.driver).

The oracle interpreter has no hybridplan package (the engine's code must answer alone), so this directory is
loaded by path as the private package `hybridplan_oracle`: a driver imports its schema and the engine-neutral
stand-ins (stubs.py) by relative import, the same modules hybridplan imports as `hybridplan.conformance.*`.
Standard library only; nothing under this directory that a driver imports may import hybridplan.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PACKAGE = "hybridplan_oracle"


HERE = Path(__file__).resolve().parent


def load(module: str) -> ModuleType:
    """`module` of this directory (e.g. "vllm.driver") as a module of the private package."""
    if PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(PACKAGE, HERE / "__init__.py",
                                                      submodule_search_locations=[str(HERE)])
        assert spec is not None and spec.loader is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"{PACKAGE}.{module}")


def main() -> int:
    if len(sys.argv) != 2:
        sys.stderr.write("usage: python launch.py <driver module> < scenarios.jsonl > answers.jsonl\n")
        return 2
    # run as a script, this directory heads sys.path: its sglang/ and vllm/ would shadow the engines themselves
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    code: int | None = load(sys.argv[1]).main()
    return code or 0


if __name__ == "__main__":
    sys.exit(main())
