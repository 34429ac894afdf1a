"""The results store: one SQLite file (stdlib), one row per measured point, keyed by what was measured.

Key: engine version and commit, GPU, cookbook page, selection, the effective flags and env, and the workload.
Each point is written in one transaction once it has finished, so an interrupted sweep keeps every finished point
and a rerun resumes at the first missing one.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hybridplan.errors import BadInput

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    engine_version TEXT NOT NULL,
    engine_commit TEXT NOT NULL,
    gpu TEXT NOT NULL,
    page TEXT NOT NULL,
    selection TEXT NOT NULL,
    flags TEXT NOT NULL,
    env TEXT NOT NULL,
    workload TEXT NOT NULL,
    sweep TEXT NOT NULL,
    created_at TEXT NOT NULL,
    outcome TEXT NOT NULL,
    failure_phase TEXT,
    failure_message TEXT,
    boot TEXT NOT NULL,
    bench TEXT,
    check_result TEXT,
    command TEXT NOT NULL,
    bench_command TEXT,
    log TEXT NOT NULL,
    bench_output TEXT
);
CREATE INDEX IF NOT EXISTS runs_build ON runs (engine_version, engine_commit);
CREATE INDEX IF NOT EXISTS runs_page ON runs (page, gpu);
"""
OUTCOMES = ("serves", "boot-failure", "runtime-oom", "degraded")


def default_path() -> Path:
    """$HYBRIDPLAN_RESULTS, else ~/.cache/hybridplan/results.sqlite."""
    env = os.environ.get("HYBRIDPLAN_RESULTS")
    return Path(env) if env else Path.home() / ".cache" / "hybridplan" / "results.sqlite"


def canonical(value: object) -> str:
    """JSON with sorted keys and no spaces: equal values, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


@dataclass(frozen=True, kw_only=True)
class RunKey:
    """What identifies a measurement."""

    engine_version: str
    engine_commit: str
    gpu: str
    page: str
    selection: dict[str, Any]
    flags: tuple[str, ...]
    env: tuple[str, ...]
    workload: dict[str, Any]

    @property
    def digest(self) -> str:
        return hashlib.sha256(canonical({
            "engine_version": self.engine_version, "engine_commit": self.engine_commit, "gpu": self.gpu,
            "page": self.page, "selection": self.selection, "flags": list(self.flags), "env": list(self.env),
            "workload": self.workload}).encode()).hexdigest()


@dataclass(frozen=True, kw_only=True)
class Run:
    """One finished point: the key, what happened, and everything the server and benchmark printed."""

    key: RunKey
    sweep: str  # the swept flag and value (`mem-fraction-static=0.85`), '' outside a sweep
    outcome: str  # serves | boot-failure | runtime-oom | degraded
    failure: dict[str, Any] | None  # {phase, message}
    boot: dict[str, Any]  # `logs parse --json`
    bench: dict[str, Any] | None  # parsed bench_serving block
    check: dict[str, Any] | None  # `logs check --json` (predicted vs observed), or {"error": ...}
    command: str
    bench_command: str | None
    log: str
    bench_output: str | None
    created_at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    id: int | None = None

    def as_dict(self, *, with_logs: bool = False) -> dict[str, Any]:
        out = {"id": self.id, "engine_version": self.key.engine_version, "engine_commit": self.key.engine_commit,
               "gpu": self.key.gpu, "page": self.key.page, "selection": self.key.selection,
               "flags": list(self.key.flags), "env": list(self.key.env), "workload": self.key.workload,
               "sweep": self.sweep, "created_at": self.created_at, "outcome": self.outcome, "failure": self.failure,
               "boot": self.boot, "bench": self.bench, "check": self.check, "command": self.command,
               "bench_command": self.bench_command}
        if with_logs:
            out["log"], out["bench_output"] = self.log, self.bench_output
        return out


class Store:
    """Open (and create) the results database."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(str(path), timeout=30)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise BadInput(f"{path}: results schema {version}, this hybridplan reads {SCHEMA_VERSION}")
            with self.conn:
                self.conn.executescript(_SCHEMA)
                self.conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise BadInput(f"{path}: not a results database ({exc})") from None
        self.conn.row_factory = sqlite3.Row

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def has(self, key: RunKey) -> bool:
        return self.conn.execute("SELECT 1 FROM runs WHERE key = ?", (key.digest,)).fetchone() is not None

    def record(self, run: Run) -> int:
        """Write one finished point atomically (a rerun of the same key replaces it)."""
        k = run.key
        row = (k.digest, k.engine_version, k.engine_commit, k.gpu, k.page, canonical(k.selection), canonical(list(k.flags)),
               canonical(list(k.env)), canonical(k.workload), run.sweep, run.created_at, run.outcome,
               (run.failure or {}).get("phase"), (run.failure or {}).get("message"), canonical(run.boot),
               None if run.bench is None else canonical(run.bench), None if run.check is None else canonical(run.check),
               run.command, run.bench_command, run.log, run.bench_output)
        with self.conn:
            self.conn.execute("DELETE FROM runs WHERE key = ?", (k.digest,))
            cur = self.conn.execute(
                "INSERT INTO runs (key, engine_version, engine_commit, gpu, page, selection, flags, env, workload, "
                "sweep, created_at, outcome, failure_phase, failure_message, boot, bench, check_result, command, "
                "bench_command, log, bench_output) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row)
        assert cur.lastrowid is not None  # set by every INSERT
        return cur.lastrowid

    def runs(self, *, page: str | None = None, gpu: str | None = None, build: str | None = None) -> list[Run]:
        """Finished points, oldest first; `build` matches the engine version or a commit prefix."""
        sql, args = "SELECT * FROM runs WHERE 1=1", list[str]()
        if page:
            sql += " AND page = ?"
            args.append(page)
        if gpu:
            sql += " AND gpu = ?"
            args.append(gpu)
        if build:
            sql += " AND (engine_version = ? OR (engine_commit != '' AND engine_commit LIKE ? || '%'))"
            args += [build, build]
        return [_run(r) for r in self.conn.execute(sql + " ORDER BY id", args)]

    def builds(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT DISTINCT engine_version, engine_commit FROM runs ORDER BY engine_version, engine_commit")]


def _run(r: sqlite3.Row) -> Run:
    key = RunKey(engine_version=r["engine_version"], engine_commit=r["engine_commit"], gpu=r["gpu"], page=r["page"],
                 selection=json.loads(r["selection"]), flags=tuple(json.loads(r["flags"])),
                 env=tuple(json.loads(r["env"])), workload=json.loads(r["workload"]))
    failure = None if r["failure_phase"] is None else {"phase": r["failure_phase"], "message": r["failure_message"]}
    return Run(key=key, sweep=r["sweep"], outcome=r["outcome"], failure=failure, boot=json.loads(r["boot"]),
               bench=None if r["bench"] is None else json.loads(r["bench"]),
               check=None if r["check_result"] is None else json.loads(r["check_result"]), command=r["command"],
               bench_command=r["bench_command"], log=r["log"], bench_output=r["bench_output"],
               created_at=r["created_at"], id=r["id"])
