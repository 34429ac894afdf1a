"""The oracles' recorded answers: conformance/recorded/<oracle>-<version>.json.gz, written by
scripts/record_oracles.py, holds every scenario as the driver read it and the engine's answer, with the driver's
header and a digest of each file the driver read besides (the materialized model configs). The conformance tests
compare hybridplan with the recording (no oracle interpreter needed) after checking it is for today's scenarios;
an opt-in test per engine re-runs its newest release live through each of its oracles and checks the answers equal
the recording.

The scenario files live in a temporary directory, so its path is written as $MODELS: a recording does not depend on
where it was made. The output is deterministic (sorted keys, no gzip timestamp): re-recording an unchanged engine on
unchanged scenarios gives the same bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridplan.conformance.compare import Answer, Case, Report, report
from hybridplan.conformance.oracle import Oracle

SCRIPT = "scripts/record_oracles.py"
PLACEHOLDER = "$MODELS"


class Stale(Exception):
    """The recording is missing, or is not for today's scenarios: it names the command that records it again."""


def path(directory: Path, name: str, version: str) -> Path:
    """Where the oracle called `name` has release `version` recorded."""
    return directory / f"{name}-{version}.json.gz"


def rerecord(engine: str, version: str) -> str:
    """The command that records release `version` of `engine` again."""
    return f"python {SCRIPT} --engine {engine} --release {version}"


def portable(value: Any, root: Path) -> Any:
    """`value` (JSON-plain) with the scenario directory `root` written as $MODELS."""
    where = json.dumps(str(root))[1:-1]
    return json.loads(json.dumps(value).replace(where, PLACEHOLDER))


def inputs(root: Path) -> dict[str, str]:
    """Every file under `root` (what the driver reads besides the scenario) -> the start of its sha256."""
    return {str(f.relative_to(root)): hashlib.sha256(f.read_bytes()).hexdigest()[:16]
            for f in sorted(root.rglob("*")) if f.is_file()}


@dataclass(frozen=True, kw_only=True)
class Recording:
    """One release's recorded answers."""

    header: Mapping[str, Any]  # the driver's: engine, version, python
    inputs: dict[str, str]
    scenarios: dict[str, Mapping[str, Any]]  # id -> the scenario as the driver read it, in recording order
    answers: dict[str, Answer]  # id -> the engine's answer


def write(file: Path, header: Mapping[str, Any], cases: list[Case], answers: Mapping[str, Answer],
          root: Path) -> None:
    """Record `answers` to `cases` (made under `root`) with the driver's `header`; the same input, the same bytes."""
    body = {"header": dict(header), "inputs": inputs(root),
            "scenarios": [{"scenario": portable(c.payload, root), "answer": portable(answers[c.id], root)}
                          for c in cases]}
    text = json.dumps(body, sort_keys=True, separators=(",", ":")) + "\n"
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as gz:
        gz.write(text.encode())
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(buffer.getvalue())


def read(file: Path) -> Recording:
    body = json.loads(gzip.decompress(file.read_bytes()))
    return Recording(header=body["header"], inputs=body["inputs"],
                     scenarios={s["scenario"]["id"]: s["scenario"] for s in body["scenarios"]},
                     answers={s["scenario"]["id"]: s["answer"] for s in body["scenarios"]})


def load(oracle: Oracle, version: str, directory: Path, cases: list[Case], root: Path) -> Recording:
    """The recording of `version`, checked to be for `cases` (made under `root`); Stale names what differs and the
    command that records it again."""
    file = path(directory, oracle.name, version)
    again = rerecord(oracle.engine, version)
    if not file.exists():
        raise Stale(f"no recording of {oracle.name} {version} ({file.name}): run {again}")
    rec = read(file)
    want = {c.id: portable(c.payload, root) for c in cases}
    new = [sid for sid in want if sid not in rec.scenarios]
    changed = [sid for sid in want if sid in rec.scenarios and rec.scenarios[sid] != want[sid]]
    gone = [sid for sid in rec.scenarios if sid not in want]
    today = inputs(root)
    files = sorted(k for k in rec.inputs.keys() | today.keys() if rec.inputs.get(k) != today.get(k))
    if new or changed or gone or files:
        what = ", ".join(f"{len(ids)} {label} (first {ids[0]})" for label, ids in
                         (("new", new), ("changed", changed), ("gone", gone), ("files changed", files)) if ids)
        raise Stale(f"{file.name} is not for today's scenarios: {what}; run {again}")
    if rec.header.get("version") != version:
        raise Stale(f"{file.name} holds {oracle.engine} {rec.header.get('version')}, not {version}: run {again}")
    return rec


def replay(oracle: Oracle, version: str, directory: Path, root: Path) -> Report:
    """Today's scenarios of `version` (their files under `root`): hybridplan's answers compared with the recorded
    engine answers."""
    cases = oracle.cases(version, root)
    rec = load(oracle, version, directory, cases, root)
    ours = [Case(id=c.id, payload=c.payload, predicted=portable(c.predicted, root), family=c.family, tags=c.tags)
            for c in cases]
    return report(rec.header, ours, rec.answers, oracle.comparison, oracle.outcome, oracle.counters)
