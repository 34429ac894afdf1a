"""Public launch reports (data/launch_reports.yaml): commands people ran on their own cards and what happened, as
the engine model's test set (`check`: does `explain --gpu` call each one right) and as the planner's evidence
(`report_evidence`, a planner.evidence.EvidenceSource)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Optional

from hybridplan.errors import BadInput
from hybridplan.hardware.catalog import GPU
from hybridplan.evidence import EvidencePoint, match_args, model_key, same_class

DATA_FILE = "launch_reports.yaml"
PHASES = ("weights", "kv_pool", "state_pool", "cuda_graph", "first_request")
BOOT_PHASES = ("weights", "kv_pool", "state_pool")
MAX_REPORTS = 512
MAX_SWEEP = 32
_FIELDS = {"id", "url", "gpu", "gpu_count", "sglang_version", "command", "sweep", "outcome", "phase",
           "request_tokens", "source", "note", "host"}
_REQUIRED = _FIELDS - {"sweep", "phase", "note", "host"}


@dataclass(frozen=True, kw_only=True)
class Report:
    """One reported launch (or a sweep of one flag's values, each with the same outcome)."""

    id: str
    url: str
    gpu: str
    gpu_count: int
    sglang_version: str
    command: str
    outcome: str  # served | failed
    phase: Optional[str]
    request_tokens: int
    source: str
    sweep_flag: Optional[str] = None
    sweep_values: tuple[str, ...] = ()
    note: str = ""
    host: Optional[str] = None  # a named unified-memory host (data/planner_constants.yaml hosts); None: the stock host

    @property
    def version(self) -> str:
        """The modelled release (or build profile) the report ran on (parse() checked it is one)."""
        return _modelled(self.sglang_version) or ""

    def launches(self) -> list[tuple[str, str]]:
        """(label, command) for each launch the report stands for: one, or one per swept value."""
        if self.sweep_flag is None:
            return [(self.id, self.command)]
        argv = shlex.split(self.command)
        return [(f"{self.id}@{v}", shlex.join(argv + [self.sweep_flag, v])) for v in self.sweep_values]


def _modelled(version: str) -> str | None:
    """The release a version string is, or the build profile it names (engine/sglang/behaviours.py PROFILES)."""
    from hybridplan.engine.api import release_of
    from hybridplan.engine.api import profile

    return version if profile(version) is not None else release_of(version)[0]


def _host_names() -> tuple[str, ...]:
    """The named hosts a report can run on (the engine's host overlays)."""
    from hybridplan.engine.api import host_names

    return tuple(host_names())


def _field(raw: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = raw.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) or (isinstance(value, str) and not value.strip()):
        raise BadInput(f"{DATA_FILE}: {where}.{key}: expected a {'non-empty string' if kind is str else kind.__name__}, "
                       f"got {value!r}")
    return value


def parse(data: Any) -> tuple[Report, ...]:
    """The reports from the parsed YAML; a malformed entry is a BadInput naming the field."""
    from hybridplan.hardware.catalog import lookup

    if not isinstance(data, dict) or not isinstance(data.get("reports"), list):
        raise BadInput(f"{DATA_FILE}: expected a mapping with a `reports` list")
    if len(data["reports"]) > MAX_REPORTS:
        raise BadInput(f"{DATA_FILE}: reports: {len(data['reports'])} entries, over the {MAX_REPORTS} bound")
    out: list[Report] = []
    for i, raw in enumerate(data["reports"]):
        where = f"reports[{i}]"
        if not isinstance(raw, dict):
            raise BadInput(f"{DATA_FILE}: {where}: expected a mapping")
        unknown, missing = set(raw) - _FIELDS, _REQUIRED - set(raw)
        if unknown or missing:
            raise BadInput(f"{DATA_FILE}: {where}: " + (f"unknown field {sorted(unknown)[0]}" if unknown else
                                                         f"missing field {sorted(missing)[0]}"))
        rid = _field(raw, "id", str, where)
        if any(r.id == rid for r in out):
            raise BadInput(f"{DATA_FILE}: {where}.id: {rid!r} used twice")
        url = _field(raw, "url", str, where)
        if not url.startswith("https://"):
            raise BadInput(f"{DATA_FILE}: {where}.url: a public https:// link, got {url!r}")
        gpu = _field(raw, "gpu", str, where)
        try:
            lookup(gpu)
        except BadInput:
            raise BadInput(f"{DATA_FILE}: {where}.gpu: {gpu!r} is not a card of data/gpus.yaml") from None
        version = _field(raw, "sglang_version", str, where)
        if _modelled(version) is None:
            raise BadInput(f"{DATA_FILE}: {where}.sglang_version: {version!r} is no modelled release or build profile")
        outcome, phase = raw.get("outcome"), raw.get("phase")
        if outcome not in ("served", "failed"):
            raise BadInput(f"{DATA_FILE}: {where}.outcome: served or failed, got {outcome!r}")
        if (outcome == "failed") != (phase is not None) or (phase is not None and phase not in PHASES):
            raise BadInput(f"{DATA_FILE}: {where}.phase: a failed report names its phase ({', '.join(PHASES)}); a "
                           f"served one has none, got {phase!r}")
        sweep = raw.get("sweep")
        flag, values = None, ()
        if sweep is not None:
            if (not isinstance(sweep, dict) or set(sweep) != {"flag", "values"} or not isinstance(sweep["flag"], str)
                    or not isinstance(sweep["values"], list) or not 0 < len(sweep["values"]) <= MAX_SWEEP
                    or not all(isinstance(v, str) and v for v in sweep["values"])):
                raise BadInput(f"{DATA_FILE}: {where}.sweep: expected {{flag, values: [1 to {MAX_SWEEP} strings]}}")
            flag, values = sweep["flag"], tuple(sweep["values"])
        tokens = _field(raw, "request_tokens", int, where)
        if not 0 < tokens <= 1 << 24:
            raise BadInput(f"{DATA_FILE}: {where}.request_tokens: 1 to {1 << 24}, got {tokens}")
        host = raw.get("host")
        if host is not None and host not in _host_names():
            raise BadInput(f"{DATA_FILE}: {where}.host: one of {', '.join(_host_names())} (data/planner_constants.yaml "
                           f"hosts), got {host!r}")
        count = _field(raw, "gpu_count", int, where)
        if not 0 < count <= 1024:
            raise BadInput(f"{DATA_FILE}: {where}.gpu_count: 1 to 1024, got {count}")
        out.append(Report(id=rid, url=url, gpu=gpu, gpu_count=count, sglang_version=version,
                          command=_field(raw, "command", str, where), outcome=outcome, phase=phase,
                          request_tokens=tokens, source=_field(raw, "source", str, where), sweep_flag=flag,
                          sweep_values=values, note=str(raw.get("note") or ""), host=host))
    return tuple(out)


@lru_cache(maxsize=1)
def load() -> tuple[Report, ...]:
    """The packaged reports."""
    from hybridplan.packaged import data_yaml

    return parse(data_yaml(DATA_FILE))


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
        return not v.serves and (self.report.phase in BOOT_PHASES) == (v.phase in BOOT_PHASES)

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


@lru_cache(maxsize=None)
def _points(report_id: str) -> tuple[EvidencePoint, ...]:
    """One report's launches as evidence points, resolved under its release once (only for cards that ask)."""
    from hybridplan.errors import HybridPlanError
    from hybridplan.hardware.catalog import lookup
    from hybridplan.engine.api import load as load_command

    r = next(r for r in load() if r.id == report_id)
    card = lookup(r.gpu)
    out = []
    for label, command in r.launches():
        try:
            args = load_command(command, platform=card.platform(), version=r.version).args
        except HybridPlanError:
            continue
        out.append(EvidencePoint(
            kind="launch report", label=label + (f" on the {r.host} host" if r.host else ""), source=r.url, gpu=r.gpu, model=model_key(args),
            outcome="served" if r.outcome == "served" else "failed", phase=r.phase,
            mem_fraction_static=float(args["mem_fraction_static"]), chunked_prefill_size=args.get("chunked_prefill_size"),
            max_running_requests=args.get("max_running_requests"), cuda_graph_max_bs=args.get("cuda_graph_decode_max_bs"),
            tp=int(args.get("tp_size") or 1), build=r.sglang_version, version=r.version, args=match_args(args)))
    return tuple(out)


def report_evidence(gpu: GPU, version: str) -> Sequence[EvidencePoint]:
    """The launch reports on the card, or on a card whose fraction evidence transfers to it (any release, as the
    public boot logs: P x (1 - f) of slack means the same in each)."""
    return tuple(p for r in load() if r.gpu == gpu.id or same_class(gpu, r.gpu) for p in _points(r.id))
