"""Engine side of the vLLM parser conformance: each argv read by the release's own `vllm serve` parser (its
FlexibleArgumentParser built by make_arg_parser, on CPU with vllm_oracle_driver.py's stand-ins).

Executed by the oracle interpreter, never imported by hybridplan: `python vllm_parse_driver.py < argvs.jsonl`. The
first output line is a header naming the release; then, per input `{"id", "argv"}`, `{"id", "parsed"}` (every
value that differs from the parser's default, the positional model as `model`) or `{"id", "error"}` (argparse's
message, or the exception a type raised). A dataclass-typed flag (parse_dataclass: `--compilation-config`, ...)
is answered with the JSON object the release validated, after its own _expand_json_human_readable_numbers, since
the dataclass it builds holds every default too; the release's validation still runs and may refuse.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from typing import Any


def _driver() -> Any:
    """vllm_oracle_driver.py beside this file (its stubs, CUDA platform and serve parser)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vllm_oracle_driver.py")
    spec = importlib.util.spec_from_file_location("vllm_oracle_driver", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["vllm_oracle_driver"] = module
    spec.loader.exec_module(module)
    return module


class Refused(Exception):
    """argparse's error(message), raised instead of printing the usage and exiting."""


def _recording(parser: Any) -> dict[str, str]:
    """Wrap each dataclass-typed flag's type so the text it validated is kept by dest (the type still runs)."""
    seen: dict[str, str] = {}
    for action in parser._actions:
        real = action.type
        if getattr(real, "__name__", "") != "parse_dataclass":
            continue

        def wrapped(text: str, real: Any = real, dest: str = action.dest) -> Any:
            out = real(text)
            seen[dest] = text
            return out

        wrapped.__name__ = real.__name__
        action.type = wrapped
    return seen


def _plain(value: Any) -> Any:
    """A value as JSON carries it (anything else by its repr)."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return repr(value)


def answer(parser: Any, seen: dict[str, str], expand: Any, line: str) -> dict[str, Any]:
    raw = json.loads(line)
    seen.clear()
    try:
        ns = parser.parse_args(list(raw["argv"]))
    except Refused as exc:
        return {"id": raw["id"], "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - a type's own exception is the release's answer too
        return {"id": raw["id"], "error": f"{type(exc).__name__}: {exc}"}
    parsed = {}
    for dest, value in vars(ns).items():
        if value == parser.get_default(dest):
            continue
        key = "model" if dest == "model_tag" else dest
        parsed[key] = json.loads(expand(seen[dest])) if dest in seen else _plain(value)
    return {"id": raw["id"], "parsed": parsed}


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    try:
        driver = _driver()
        vllm = driver.prepare()
        parser = driver.serve_parser()
        from vllm.engine.arg_utils import _expand_json_human_readable_numbers as expand
    except Exception as exc:  # noqa: BLE001 - the header says why there is no engine
        _emit({"header": True, "engine": None, "error": f"{type(exc).__name__}: {exc}"})
        return

    def refuse(message: str) -> None:
        raise Refused(message)

    parser.error = refuse
    seen = _recording(parser)
    _emit({"header": True, "engine": "vllm", "version": str(vllm.__version__)})
    for line in sys.stdin:
        if line.strip():
            _emit(answer(parser, seen, expand, line))


if __name__ == "__main__":
    main()
