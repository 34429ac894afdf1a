"""Evaluate a docs cookbook config module (`configs/<Org>/<model>.jsx`) with Node.js in a locked-down child process.

The child runs data/docs/evaluate_config.mjs under Node's permission model (it may read only that script: the page
arrives on stdin; no child processes, workers or native addons), with a heap limit and a wall-time limit, and
evaluates the page inside a vm context holding only the JavaScript builtins (no `require`, `process`, `fetch` or
`import`), so the page has no network or file access of its own. It prints the page's literal data and every
selection-dependent function's value on every selection (bounded).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from hybridplan.errors import BadInput
from hybridplan.textfile import read_text

MAX_SOURCE_BYTES = 512 << 10  # the largest docs config module (kimi-k3.jsx) is ~100 KB
MAX_SELECTIONS = 20_000  # the docs' own checker stops enumerating at 20,000 selections
WALL_SECONDS = 30
EVAL_MS = 10_000  # the vm timeout for loading the module, and again for enumerating it
HEAP_MB = 256
MAX_OUTPUT_BYTES = 64 << 20
NODE_CANDIDATES = ("/usr/bin/node", "node", "nodejs")


class NodeUnavailable(BadInput):
    """No usable Node.js (20 or newer) to evaluate a docs page."""


@dataclass(frozen=True)
class Evaluation:
    """What the child printed: the literal data (functions as {"$fn": source}), the dims, and the functions' values
    (`at[i]` indexes `values` for selection i, selections in row-major order over `dims`)."""

    source: str
    origin: str
    node: str
    data: dict[str, Any]
    dims: list[dict[str, Any]]
    selections: int
    functions: list[dict[str, Any]]
    helpers: list[str]
    errors: list[str]


def _runner() -> Path:
    return Path(str(resources.files("hybridplan") / "data" / "docs" / "evaluate_config.mjs"))


@lru_cache(maxsize=1)
def node_command() -> tuple[str, ...]:
    """The node binary and its sandbox flags for the installed version (`--permission` from 22.13/23.5 on,
    `--experimental-permission` on 20-22). Debian 12's Node 18 has no permission model: there the module still runs
    only inside the vm context (no require, process, fetch or import; no code from strings) with an empty env."""
    binary = next((b for b in (shutil.which(c) for c in NODE_CANDIDATES) if b), None)
    if binary is None:
        raise NodeUnavailable("Node.js is needed to read a docs page (apt-get install nodejs); none found")
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10, env={}).stdout.strip()
    m = re.fullmatch(r"v(\d+)\.(\d+)\.\d+", out)
    if not m or int(m.group(1)) < 18:
        raise NodeUnavailable(f"Node.js 18 or newer is needed to read a docs page; {binary} is {out or 'unknown'}")
    major, minor = int(m.group(1)), int(m.group(2))
    runner = _runner()
    if major < 20:
        fs: tuple[str, ...] = ()
    else:
        fs = ("--permission" if (major, minor) >= (22, 13) else "--experimental-permission", f"--allow-fs-read={runner}")
    return (binary, *fs, "--experimental-vm-modules", "--no-warnings",
            f"--max-old-space-size={HEAP_MB}", "--disallow-code-generation-from-strings", str(runner),
            str(MAX_SELECTIONS), str(EVAL_MS))


def evaluate_source(source: str, origin: str) -> Evaluation:
    """Evaluate a config module's text; BadInput (exit 2) when it does not load, times out or is too big."""
    if len(source.encode()) > MAX_SOURCE_BYTES:
        raise BadInput(f"{origin}: over the {MAX_SOURCE_BYTES:,}-byte bound for a docs config module")
    try:
        proc = subprocess.run(node_command(), input=source.encode(), capture_output=True, timeout=WALL_SECONDS,
                              env={}, cwd="/")
    except subprocess.TimeoutExpired:
        raise BadInput(f"{origin}: evaluating the module took over {WALL_SECONDS} s") from None
    if len(proc.stdout) > MAX_OUTPUT_BYTES:
        raise BadInput(f"{origin}: the module's evaluation is over {MAX_OUTPUT_BYTES >> 20} MiB")
    try:
        reply = json.loads(proc.stdout or b"null")
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        raise BadInput(f"{origin}: node could not evaluate the module: {(why or ['no output'])[-1][:300]}")
    if not reply.get("ok"):
        raise BadInput(f"{origin}: {str(reply.get('error'))[:300]}")
    r = reply["result"]
    return Evaluation(source=source, origin=origin, node=reply.get("node", ""), data=r["data"], dims=r["dims"],
                      selections=r["selections"], functions=r["functions"], helpers=r["helpers"], errors=r["errors"])


def evaluate_file(path: str | Path) -> Evaluation:
    """Read a bounded UTF-8 file and evaluate it."""
    return evaluate_source(read_text(Path(path), limit=MAX_SOURCE_BYTES), str(path))
