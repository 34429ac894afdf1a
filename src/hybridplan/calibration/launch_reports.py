"""Public launch reports: commands people ran on their own cards and what happened, one data file per engine
(data/sglang_launch_reports.yaml, data/vllm_launch_reports.yaml; each states its `engine:` and its phases), read by one
loader. They are the engine model's test set (`check`: does `explain --gpu` call each one right) and, for the
engine whose verdict weighs a mem fraction, the planner's evidence (`report_evidence`, an evidence.EvidenceSource)."""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Optional

from hybridplan.errors import BadInput
from hybridplan.evidence import EvidencePoint

MAX_REPORTS = 512
MAX_SWEEP = 32
# what a log prints, by name (a report's `logged:`): GiB, tokens, blocks, sequences
LOGGED = ("available_kv_gib", "kv_cache_tokens", "max_concurrency", "num_blocks", "max_num_seqs", "needed_kv_gib",
          "estimated_max_model_len", "free_gib", "total_gib", "requested_gib", "weights_gib")
_FIELDS = {"id", "url", "gpu", "gpu_count", "version", "logged_version", "command", "sweep", "outcome", "phase",
           "request_tokens", "message", "logged", "differs", "assumed", "source", "note", "host"}
_REQUIRED = {"id", "url", "gpu", "gpu_count", "version", "command", "outcome", "request_tokens", "source"}


@dataclass(frozen=True, kw_only=True)
class Report:
    """One reported launch (or a sweep of one flag's values, each with the same outcome), on one engine."""

    engine: str
    id: str
    url: str
    gpu: str
    gpu_count: int
    version: str  # the modelled release (or build profile) the launch is checked under
    command: str
    outcome: str  # served | failed
    phase: Optional[str]
    request_tokens: int
    source: str
    boot_phases: tuple[str, ...]  # the engine's phases before it serves (the file's `phases.boot`)
    sweep_flag: Optional[str] = None
    sweep_values: tuple[str, ...] = ()
    logged_version: str = ""  # the version string the log prints, where it is not `version` (a dev build, ...)
    message: str = ""  # the engine's own words where it refused, as the report quotes them
    logged: Mapping[str, float] = field(default_factory=dict)  # numbers the log prints (LOGGED names)
    differs: Mapping[str, str] = field(default_factory=dict)  # a logged figure (or outcome/phase) the model misses: why
    assumed: str = ""  # what the launch takes that the public text does not show
    note: str = ""
    host: Optional[str] = None  # a named unified-memory host (data/planner_constants.yaml hosts); None: the stock host

    def launches(self) -> list[tuple[str, str]]:
        """(label, command) for each launch the report stands for: one, or one per swept value."""
        if self.sweep_flag is None:
            return [(self.id, self.command)]
        argv = shlex.split(self.command)
        return [(f"{self.id}@{v}", shlex.join(argv + [self.sweep_flag, v])) for v in self.sweep_values]


def _host_names() -> tuple[str, ...]:
    """The named hosts a report can run on (the engine's host overlays)."""
    from hybridplan.engine.api import host_names

    return tuple(host_names())


def _field(raw: dict[str, Any], key: str, kind: type, where: str, name: str) -> Any:
    value = raw.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) or (isinstance(value, str) and not value.strip()):
        raise BadInput(f"{name}: {where}.{key}: expected a {'non-empty string' if kind is str else kind.__name__}, "
                       f"got {value!r}")
    return value


def _text(raw: dict[str, Any], key: str, where: str, name: str) -> str:
    """An optional free-text field ('' when absent)."""
    return "" if raw.get(key) is None else str(_field(raw, key, str, where, name))


def _phases(data: dict[str, Any], name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The file's phases: those before the engine serves (boot) and after (runtime), in boot order."""
    ph = data.get("phases")
    if (not isinstance(ph, dict) or set(ph) != {"boot", "runtime"}
            or not all(isinstance(v, list) and v and all(isinstance(p, str) and p for p in v) for v in ph.values())):
        raise BadInput(f"{name}: phases: expected {{boot: [names], runtime: [names]}}")
    return tuple(ph["boot"]), tuple(ph["runtime"])


def _logged(raw: dict[str, Any], where: str, name: str) -> dict[str, float]:
    value = raw.get("logged") or {}
    if not isinstance(value, dict):
        raise BadInput(f"{name}: {where}.logged: expected a mapping of {', '.join(LOGGED)}")
    for key, number in value.items():
        if key not in LOGGED:
            raise BadInput(f"{name}: {where}.logged: unknown figure {key!r} (known: {', '.join(LOGGED)})")
        if (not isinstance(number, (int, float)) or isinstance(number, bool) or not math.isfinite(number)
                or number <= 0):
            raise BadInput(f"{name}: {where}.logged.{key}: a positive number, got {number!r}")
    return dict(value)


def _differs(raw: dict[str, Any], where: str, name: str) -> dict[str, str]:
    value = raw.get("differs") or {}
    known = (*LOGGED, "outcome", "phase", "message")
    if not isinstance(value, dict) or not all(isinstance(v, str) and v.strip() for v in value.values()):
        raise BadInput(f"{name}: {where}.differs: expected a mapping of figure -> why it does not reproduce")
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise BadInput(f"{name}: {where}.differs: unknown figure {unknown[0]!r} (known: {', '.join(known)})")
    return dict(value)


def _engine(data: dict[str, Any], name: str) -> str:
    from hybridplan.engine.api import engines

    engine = data.get("engine")
    if engine not in engines():
        raise BadInput(f"{name}: engine: one of {', '.join(engines())}, got {engine!r}")
    return str(engine)


def _modelled(engine: str, version: str) -> bool:
    """Whether the engine models `version` as itself (a release or build profile): a report is checked under the
    release it names, never one a version string would be mapped to (the log's own string goes in logged_version)."""
    from hybridplan.engine.api import for_engine

    try:
        return for_engine(engine, version).version == version
    except BadInput:
        return False


def report_file(engine: str) -> str:
    """The data file of engine `engine`'s public launch reports: each engine's is named for it (a new engine adds
    `<engine>_launch_reports.yaml`)."""
    return f"{engine}_launch_reports.yaml"


def parse(data: Any, name: str = "launch reports") -> tuple[Report, ...]:
    """The reports of one parsed data file; a malformed entry is a BadInput naming the file and the field."""
    from hybridplan.hardware.catalog import lookup

    if not isinstance(data, dict) or not isinstance(data.get("reports"), list):
        raise BadInput(f"{name}: expected a mapping with `engine`, `phases` and a `reports` list")
    engine = _engine(data, name)
    boot, runtime = _phases(data, name)
    if len(data["reports"]) > MAX_REPORTS:
        raise BadInput(f"{name}: reports: {len(data['reports'])} entries, over the {MAX_REPORTS} bound")
    out: list[Report] = []
    for i, raw in enumerate(data["reports"]):
        where = f"reports[{i}]"
        if not isinstance(raw, dict):
            raise BadInput(f"{name}: {where}: expected a mapping")
        unknown, missing = set(raw) - _FIELDS, _REQUIRED - set(raw)
        if unknown or missing:
            raise BadInput(f"{name}: {where}: " + (f"unknown field {sorted(unknown)[0]}" if unknown else
                                                    f"missing field {sorted(missing)[0]}"))
        rid = _field(raw, "id", str, where, name)
        if any(r.id == rid for r in out):
            raise BadInput(f"{name}: {where}.id: {rid!r} used twice")
        url = _field(raw, "url", str, where, name)
        if not url.startswith("https://"):
            raise BadInput(f"{name}: {where}.url: a public https:// link, got {url!r}")
        gpu = _field(raw, "gpu", str, where, name)
        try:
            lookup(gpu)
        except BadInput:
            raise BadInput(f"{name}: {where}.gpu: {gpu!r} is not a card of data/gpus.yaml") from None
        version = _field(raw, "version", str, where, name)
        if not _modelled(engine, version):
            raise BadInput(f"{name}: {where}.version: {engine} models no release or build {version!r}")
        outcome, phase = raw.get("outcome"), raw.get("phase")
        if outcome not in ("served", "failed"):
            raise BadInput(f"{name}: {where}.outcome: served or failed, got {outcome!r}")
        if (outcome == "failed") != (phase is not None) or (phase is not None and phase not in boot + runtime):
            raise BadInput(f"{name}: {where}.phase: a failed report names its phase ({', '.join(boot + runtime)}); "
                           f"a served one has none, got {phase!r}")
        sweep = raw.get("sweep")
        flag, values = None, ()
        if sweep is not None:
            if (not isinstance(sweep, dict) or set(sweep) != {"flag", "values"} or not isinstance(sweep["flag"], str)
                    or not isinstance(sweep["values"], list) or not 0 < len(sweep["values"]) <= MAX_SWEEP
                    or not all(isinstance(v, str) and v for v in sweep["values"])):
                raise BadInput(f"{name}: {where}.sweep: expected {{flag, values: [1 to {MAX_SWEEP} strings]}}")
            flag, values = sweep["flag"], tuple(sweep["values"])
        tokens = _field(raw, "request_tokens", int, where, name)
        if not 0 < tokens <= 1 << 24:
            raise BadInput(f"{name}: {where}.request_tokens: 1 to {1 << 24}, got {tokens}")
        count = _field(raw, "gpu_count", int, where, name)
        if not 0 < count <= 1024:
            raise BadInput(f"{name}: {where}.gpu_count: 1 to 1024, got {count}")
        host = raw.get("host")
        if host is not None and host not in _host_names():
            raise BadInput(f"{name}: {where}.host: one of {', '.join(_host_names())} (data/planner_constants.yaml "
                           f"hosts), got {host!r}")
        out.append(Report(engine=engine, id=rid, url=url, gpu=gpu, gpu_count=count, version=version,
                          command=_field(raw, "command", str, where, name), outcome=outcome, phase=phase,
                          request_tokens=tokens, source=_field(raw, "source", str, where, name), boot_phases=boot,
                          sweep_flag=flag, sweep_values=values,
                          logged_version=_text(raw, "logged_version", where, name),
                          message=_text(raw, "message", where, name), logged=_logged(raw, where, name),
                          differs=_differs(raw, where, name), assumed=_text(raw, "assumed", where, name),
                          note=_text(raw, "note", where, name), host=host))
    return tuple(out)


@lru_cache(maxsize=None)
def load(engine: str) -> tuple[Report, ...]:
    """The packaged reports of engine `engine` (its file states that engine)."""
    from hybridplan.packaged import data_yaml

    name = report_file(engine)
    reports = parse(data_yaml(name), name)
    if any(r.engine != engine for r in reports):
        raise BadInput(f"{name}: engine: {engine} (the file is named for it)")
    return reports


@dataclass(frozen=True, kw_only=True)
class ReportCheck:
    """One launch of a report against `explain --gpu`'s verdict (planner.verdict.Verdict; None: not loadable)."""

    report: Report
    label: str
    verdict: Any
    error: str | None = None

    @property
    def predicted(self) -> str:
        v = self.verdict
        return "—" if v is None else ("serves" if v.serves else f"fails ({v.phase})")

    @property
    def agrees(self) -> bool:
        """Serves or fails as reported, and a failure in the same kind of phase (boot: weights or a pool; runtime:
        capture or the first request), the model's own resolution."""
        v = self.verdict
        if v is None:
            return False
        if self.report.outcome == "served":
            return bool(v.serves)
        return not v.serves and (self.report.phase in self.report.boot_phases) == (v.phase in self.report.boot_phases)

    @property
    def unsafe(self) -> bool:
        """A launch that failed, predicted to serve."""
        return self.report.outcome == "failed" and self.verdict is not None and bool(self.verdict.serves)


def check(report: Report) -> list[ReportCheck]:
    """Predict every launch of a report on its card, under its release and on its host (explain --gpu's verdict; a
    named host's constants where the report names one)."""
    from hybridplan.errors import HybridPlanError
    from hybridplan.hardware.catalog import lookup
    from hybridplan.engine.api import load as load_command
    from hybridplan.engine.api import constants_for, for_loaded
    from hybridplan.engine.api import predict

    card = lookup(report.gpu)
    consts = constants_for(card.id, report.host)
    out = []
    for label, command in report.launches():
        try:
            loaded = load_command(command, platform=card.platform(), version=report.version)
            tl, _ = for_loaded(loaded, gpu=card, constants=consts)
            running = loaded.args["max_running_requests"] or 1
            v = predict(loaded, tl, request_tokens=report.request_tokens, concurrency=min(running, 2))
            out.append(ReportCheck(report=report, label=label, verdict=v))
        except HybridPlanError as exc:
            out.append(ReportCheck(report=report, label=label, verdict=None, error=exc.message))
    return out


def report_points(engine: str) -> tuple[EvidencePoint, ...]:
    """Every launch of engine `engine`'s reports as an evidence point, resolved by that engine under the report's
    release (what the evidence table ships); a launch the engine refuses is no evidence."""
    from hybridplan.errors import HybridPlanError
    from hybridplan.engine.api import for_engine

    out = []
    for r in load(engine):
        serving = for_engine(r.engine, r.version)
        for label, command in r.launches():
            try:
                out.append(serving.launch_evidence(
                    command, r.gpu, kind="launch report", label=label + (f" on the {r.host} host" if r.host else ""),
                    source=r.url, outcome="served" if r.outcome == "served" else "failed", phase=r.phase))
            except HybridPlanError:
                continue
    return tuple(out)
