"""The boot-log parser: pools, weights, graphs, caps and the failure phase, per rank, for 0.5.x releases and dev builds.

Each pattern below matches one engine log line (the table in reference/engine-semantics.md section 7); the engine
prints "GB" and means GiB (utils/common.py::get_available_gpu_memory divides by 2**30), so values are GiB.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

from hybridplan.dtypes import ITEMSIZE
from hybridplan.verify.failures import Failure, Milestone, classify
from hybridplan.verify.records import Record, rank0_tag, rank_numbers, split_records

_F = r"\d+(?:\.\d+)?"
_NUM = rf"({_F})"

# entrypoints/engine.py: the resolved settings (L1)
SERVER_ARGS = re.compile(rf"server_args=.*?\bmem_fraction_static={_NUM}")
# model_executor/model_runner.py::load_model
LOAD_BEGIN = re.compile(rf"Load weight begin\. avail mem={_NUM} ?GB")
LOAD_END = re.compile(rf"Load weight end\..*?avail mem={_NUM} ?GB,? mem usage={_NUM} ?GB")
# mem_cache/kv_cache_configurator.py::mm_runtime_reservation_gb
RESERVING = re.compile(rf"Reserving {_NUM} GB of the KV budget for post-sizing multimodal")
# mem_cache/memory_pool.py::MambaPool.__init__ (no comma before `intermediate`)
MAMBA = re.compile(
    rf"Mamba Cache is allocated\.(?: max_mamba_cache_size: (?P<K>\d+),)? conv_state size: (?P<conv>{_F}) ?GB, "
    rf"ssm_state size: (?P<ssm>{_F}) ?GB"
    rf"(?:,? intermediate_ssm_state_cache size: (?P<issm>{_F}) ?GB)?"
    rf"(?:,? intermediate_conv_window_cache size: (?P<iconv>{_F}) ?GB)?"
)
# mem_cache/memory_pool.py::KVCache._finalize_allocation_log (MHA: K and V; MLA/DSA: one KV size)
KV = re.compile(
    r"KV Cache (?:is allocated|VA upper bound)\. (?:dtype: (?P<dtype>[\w.]+), )?"
    rf"#tokens: (?P<T>\d+), (?:K size: (?P<k>{_F}) GB, V size: (?P<v>{_F}) GB"
    rf"|KV size: (?P<kv>{_F}) GB)"
)
# older builds: model_runner.py::configure_kv_cache_dtype
KV_DTYPE = re.compile(r"Using KV cache dtype: ([\w.]+)")
# kv_cache_configurator.py::KVCacheConfigurator.configure
POOL_END = re.compile(rf"Memory pool end\. avail mem={_NUM} ?GB")
# kv_cache_configurator.py::resolve_max_num_reqs (warnings L7, L8)
CAPPED = re.compile(r"max_running_requests is capped to (\d+) by the mamba state cache "
                    r"\(max_mamba_cache_size=(\d+), (\d+) state slots per request\)")
REDUCED = re.compile(r"max_running_requests was reduced from the requested (\d+) to (\d+)")
# kv_pool_runtime.py::compute_post_capture_kv_resize
POST_CAPTURE_CAP = re.compile(r"Post-capture KV sizing: max_running_requests (\d+) -> (\d+)")
# cuda_graph_setup.py (0.5.2x: `Capture {role} {phase} CUDA graph begin/end. ...`; older: `Capture cuda graph ...`)
CAPTURE_BEGIN = re.compile(r"Capture [\w ]*?graph begin\b", re.IGNORECASE)
CAPTURE_END = re.compile(rf"Capture [\w ]*?graph end\..*?mem usage={_NUM} ?GB", re.IGNORECASE)
# managers/scheduler.py (tp_rank 0): the final numbers
SUMMARY = re.compile(r"max_total_num_tokens=\d+, .*max_running_requests=\d+")
_KEYVAL = re.compile(rf"(\w+)={_NUM}")
# entrypoints/http_server.py, after the warmup request
READY = re.compile(r"The server is fired up and ready to roll")

_PATTERNS = (LOAD_BEGIN, LOAD_END, RESERVING, MAMBA, KV, KV_DTYPE, POOL_END, CAPPED, REDUCED, POST_CAPTURE_CAP,
             CAPTURE_BEGIN, CAPTURE_END, SUMMARY, READY)
# words a wrapped line may be cut inside: the patterns' own, the summary's keys and the dtype names the engine prints
_VOCABULARY = frozenset(
    [w for p in _PATTERNS for w in re.findall(r"[A-Za-z_]\w{2,}", p.pattern)]
    + ["chunked_prefill_size", "max_prefill_tokens", "context_len", "available_gpu_mem", "available_cpu_mem", "GB"]
    + list(ITEMSIZE)
)

# `logs parse --json` keys, in order (issue 6)
KEYS = (
    "pre_load_avail_gib", "weights_gib", "avail_after_load_gib", "max_mamba_cache_size", "conv_state_gib",
    "ssm_state_gib", "kv_dtype", "kv_tokens", "k_gib", "v_gib", "max_total_num_tokens", "max_running_requests",
    "context_len", "cuda_graph_gib", "avail_after_pools_gib", "failure",
)


@dataclass(frozen=True, kw_only=True)
class LoadEvent:
    """One runner's weight load (the target's first, then a draft's)."""

    avail_before_gib: float | None
    avail_after_gib: float
    usage_gib: float


@dataclass(frozen=True, kw_only=True)
class RankLog:
    """What one rank logged. The public keys are KEYS; the rest is what `logs check` needs besides."""

    pre_load_avail_gib: float | None = None  # first "Load weight begin" avail (~ pre_model_load_memory, local)
    weights_gib: float | None = None  # sum of "Load weight end" mem usage before the pools (target + draft)
    avail_after_load_gib: float | None = None  # last "Load weight end" avail before the pools (~ A, local)
    max_mamba_cache_size: int | None = None
    conv_state_gib: float | None = None
    ssm_state_gib: float | None = None
    kv_dtype: str | None = None
    kv_tokens: int | None = None
    k_gib: float | None = None  # MLA logs one combined size; it is reported here and v_gib stays absent
    v_gib: float | None = None
    max_total_num_tokens: int | None = None
    max_running_requests: int | None = None  # the effective value: summary line, else the last cap line
    context_len: int | None = None
    cuda_graph_gib: float | None = None  # sum of every graph capture's mem usage (decode, prefill, draft)
    avail_after_pools_gib: float | None = None  # last "Memory pool end" avail before graph capture
    failure: Failure | None = None
    # not part of the JSON
    loads: tuple[LoadEvent, ...] = ()
    mm_reservation_gib: float | None = None
    logged_mem_fraction_static: float | None = None
    intermediate_ssm_gib: float | None = None
    intermediate_conv_window_gib: float | None = None
    capped_slots_per_request: int | None = None  # S, read off the cap line
    summary: dict = field(default_factory=dict)
    milestone: Milestone = Milestone.START

    def as_dict(self) -> dict:
        out = {}
        for key in KEYS:
            value = getattr(self, key)
            if value is not None:
                out[key] = value.as_dict() if isinstance(value, Failure) else value
        return out


@dataclass(frozen=True, kw_only=True)
class BootLog:
    """A parsed boot log: rank 0's view (or the only rank's) and every rank's when several ranks logged."""

    rank0: RankLog
    rank0_tag: str
    ranks: dict[str, RankLog]

    def as_dict(self) -> dict:
        out = self.rank0.as_dict()
        if len(self.ranks) > 1:
            out["ranks"] = {tag: r.as_dict() for tag, r in self.ranks.items()}
        return out

    def min_over_ranks(self, key: str) -> float | None:
        """The MIN over ranks, as the engine's world all-reduce takes it (P and A)."""
        values = [getattr(r, key) for r in self.ranks.values() if getattr(r, key) is not None]
        return min(values) if values else None


class _Fold:
    """Accumulates one rank's numbers record by record; the target's lines win where a draft logs the same ones."""

    def __init__(self) -> None:
        self.v: dict = {}
        self.loads: list[LoadEvent] = []
        self.begin: float | None = None
        self.pools = False
        self.graphs: float | None = None
        self.cap_mrr: int | None = None
        self.post_capture_mrr: int | None = None
        self.summary: dict = {}
        self.milestone = Milestone.START

    def reach(self, m: Milestone) -> None:
        self.milestone = max(self.milestone, m)

    def add(self, t: str) -> None:
        v = self.v
        if (m := LOAD_BEGIN.search(t)) is not None:
            self.begin = float(m.group(1))
            v.setdefault("pre_load_avail_gib", self.begin)
            self.reach(Milestone.LOADING)
        if (m := LOAD_END.search(t)) is not None:
            if not self.pools:
                self.loads.append(LoadEvent(avail_before_gib=self.begin, avail_after_gib=float(m.group(1)),
                                            usage_gib=float(m.group(2))))
            self.begin = None
            self.reach(Milestone.LOADED)
        if (m := SERVER_ARGS.search(t)) is not None:
            v.setdefault("logged_mem_fraction_static", float(m.group(1)))
        if (m := RESERVING.search(t)) is not None:
            v.setdefault("mm_reservation_gib", float(m.group(1)))
        if (m := KV_DTYPE.search(t)) is not None:
            v.setdefault("kv_dtype", m.group(1))
        if (m := MAMBA.search(t)) is not None and "conv_state_gib" not in v:
            self.pools = True
            if m.group("K") is not None:
                v["max_mamba_cache_size"] = int(m.group("K"))
            v["conv_state_gib"], v["ssm_state_gib"] = float(m.group("conv")), float(m.group("ssm"))
            for key, group in (("intermediate_ssm_gib", "issm"), ("intermediate_conv_window_gib", "iconv")):
                if m.group(group) is not None:
                    v[key] = float(m.group(group))
            self.reach(Milestone.POOLS)
        if (m := KV.search(t)) is not None and "kv_tokens" not in v:
            self.pools = True
            if m.group("dtype"):
                v["kv_dtype"] = m.group("dtype")
            v["kv_tokens"] = int(m.group("T"))
            if m.group("kv") is not None:
                v["k_gib"] = float(m.group("kv"))
            else:
                v["k_gib"], v["v_gib"] = float(m.group("k")), float(m.group("v"))
            self.reach(Milestone.POOLS)
        if (m := POOL_END.search(t)) is not None and self.graphs is None:
            v["avail_after_pools_gib"] = float(m.group(1))
            self.reach(Milestone.POOLS_DONE)
        if (m := CAPPED.search(t)) is not None:
            self.cap_mrr = int(m.group(1))
            v["capped_slots_per_request"] = int(m.group(3))
        if (m := REDUCED.search(t)) is not None:
            self.cap_mrr = int(m.group(2))
        if (m := POST_CAPTURE_CAP.search(t)) is not None:
            self.post_capture_mrr = int(m.group(2))
        if CAPTURE_BEGIN.search(t):
            self.reach(Milestone.CAPTURING)
        if (m := CAPTURE_END.search(t)) is not None:
            self.graphs = (self.graphs or 0.0) + float(m.group(1))
            self.reach(Milestone.CAPTURED)
        if SUMMARY.search(t):
            self.summary = {k: float(x) if "." in x else int(x) for k, x in _KEYVAL.findall(t)}
            self.reach(Milestone.SERVING)
        if READY.search(t):
            self.reach(Milestone.READY)

    def result(self, failure: Failure | None) -> RankLog:
        v = dict(self.v)
        if self.loads:
            v["weights_gib"] = round(sum(e.usage_gib for e in self.loads), 2)
            v["avail_after_load_gib"] = self.loads[-1].avail_after_gib
        mrr = self.summary.get("max_running_requests")
        if mrr is None:
            mrr = self.post_capture_mrr if self.post_capture_mrr is not None else self.cap_mrr
        return RankLog(
            **v, loads=tuple(self.loads), summary=self.summary, milestone=self.milestone,
            max_total_num_tokens=self.summary.get("max_total_num_tokens"), max_running_requests=mrr,
            context_len=self.summary.get("context_len"),
            cuda_graph_gib=None if self.graphs is None else round(self.graphs, 2), failure=failure,
        )


def _rank_log(records: list[Record]) -> RankLog:
    """Fold one rank's records into its numbers and its failure."""
    fold = _Fold()
    marks: list[Milestone] = []
    for rec in records:
        fold.add(rec.text)
        marks.append(fold.milestone)
    return fold.result(classify(records, marks))


def parse_log(text: str) -> BootLog:
    """Parse a boot log. Lines without a rank tag (the launcher's, tracebacks before any tag) count for rank 0."""
    records = split_records(text, _VOCABULARY)
    tags = sorted(dict.fromkeys(r.rank for r in records), key=rank_numbers)
    tag0 = rank0_tag(tags)
    by_rank: dict[str, list[Record]] = {t: [] for t in tags if t} or {"": []}
    for rec in records:
        by_rank[rec.rank if rec.rank else tag0].append(rec)
    ranks = {tag: _rank_log(recs) for tag, recs in by_rank.items()}
    rank0 = ranks[tag0]
    if rank0.failure is None:
        failed = [r.failure for r in ranks.values() if r.failure is not None]
        if failed:
            rank0 = _with_failure(rank0, failed[0])
            ranks[tag0] = rank0
    return BootLog(rank0=rank0, rank0_tag=tag0, ranks=ranks)


def _with_failure(r: RankLog, failure: Failure) -> RankLog:
    values = {f.name: getattr(r, f.name) for f in fields(r)}
    values["failure"] = failure
    return RankLog(**values)
