"""The boot-log parser: pools, weights, graphs, caps and the failure phase, per rank, for 0.3.x to 0.5.x releases and
dev builds, from whole logs or excerpts.

Each engine line is found by its marker (the table in reference/engine-semantics.md section 7) and read as fields
(verify.fields); the engine prints "GB" and means GiB (utils/common.py::get_available_gpu_memory divides by 2**30),
so values are GiB. Every pattern has bounded repeats only and the input is bounded before any work, so parsing is
linear in the log's size whatever it holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields as dc_fields
from typing import Any

from hybridplan.limits import MAX_LOG_BYTES
from hybridplan.dtypes import ITEMSIZE
from hybridplan.engine.logtext import check_bounds
from hybridplan.errors import BadInput
from hybridplan.engine.sglang.failures import ENGINE_MESSAGE_WORDS, Failure, Milestone, classify
from hybridplan.engine.sglang.log_fields import fields, integer, number
from hybridplan.engine.sglang.log_records import Record, rank0_tag, rank_numbers, split_records

_N = r"(\d{1,12}(?:\.\d{1,9})?)"

# marker -> what it starts (model_executor/model_runner.py::load_model, memory_pool.py, kv_cache_configurator.py,
# cuda_graph_setup.py, managers/scheduler.py; older releases in the comments of _Fold.add)
LOAD_BEGIN = "Load weight begin."
LOAD_END = "Load weight end."
SERVER_ARGS = "server_args="
MAMBA = "Mamba Cache is allocated."
KV = ("KV Cache is allocated.", "KV Cache VA upper bound.")
KV_DTYPE = "Using KV cache dtype:"
POOL_END = "Memory pool end."
SUMMARY = "max_total_num_tokens="
READY = "The server is fired up and ready to roll"
PREFILL = "Prefill batch"
DECODE = "Decode batch"
MESSAGE_STARTS = (LOAD_BEGIN, LOAD_END, SERVER_ARGS, MAMBA, *KV, KV_DTYPE, POOL_END, SUMMARY, READY, PREFILL, DECODE,
                  "Capture ", "Reserving ", "max_running_requests is capped", "max_running_requests was reduced",
                  "Post-capture KV sizing", "Memory baseline taken", "Init torch distributed")

# mem_cache/kv_cache_configurator.py::mm_runtime_reservation_gb
RESERVING = re.compile(rf"Reserving {_N} GB of the KV budget")
# kv_cache_configurator.py::resolve_max_num_reqs (warnings L7, L8)
CAPPED = re.compile(r"max_running_requests is capped to (\d{1,9}) by the mamba state cache "
                    r"\(max_mamba_cache_size=(\d{1,12}), (\d{1,4}) state slots per request\)")
REDUCED = re.compile(r"max_running_requests was reduced from the requested (\d{1,9}) to (\d{1,9})")
# kv_pool_runtime.py::compute_post_capture_kv_resize
POST_CAPTURE_CAP = re.compile(r"Post-capture KV sizing: max_running_requests (\d{1,9}) -> (\d{1,9})")
# cuda_graph_setup.py (0.5.2x: `Capture {role} {phase} CUDA graph begin/end. ...`; older: `Capture [draft ]cuda graph`)
CAPTURE = re.compile(r"Capture [A-Za-z ]{0,40}graph (begin|end)\b", re.IGNORECASE)
# scheduler_components/metrics_reporter.py: `Prefill batch[ [i]], #new-seq: n, #new-token: t, ...`
PREFILL_TOKENS = re.compile(r"Prefill batch(?: \[\d{1,12}\])?, #new-seq: \d{1,9}, #new-token: (\d{1,12})")
# torch's allocator (c10/cuda/CUDACachingAllocator.cpp): the 2.x wording, then the 1.x one
_UNIT = r"(GiB|MiB|KiB|B)"
OOM = re.compile(rf"Tried to allocate {_N} {_UNIT}")
OOM_FREE = re.compile(rf"GPU \d{{1,3}} has a total capacity of {_N} {_UNIT} of which {_N} {_UNIT} is free")
OOM_FREE_OLD = re.compile(rf"{_N} {_UNIT} total capacity; {_N} {_UNIT} already allocated; {_N} {_UNIT} free")
_UNITS = {"GiB": 1.0, "MiB": 1 / 1024, "KiB": 1 / 1024**2, "B": 1 / 1024**3}
# the rest of torch 2.x's message (CUDACachingAllocator.cpp), for re-joining it where a terminal cut a word
_OOM_TEXT = ("CUDA HIP out of memory. Including non-PyTorch memory, this process has memory in use. Of the allocated "
             "memory is allocated by PyTorch, and is reserved by PyTorch but unallocated. If reserved but unallocated "
             "memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation. "
             "See documentation for Memory Management (https://pytorch.org/docs/stable/notes/cuda.html"
             "#environment-variables)")

# words a wrapped line may be cut inside: the markers', the fields' and the engine messages' own, the dtype names
_VOCABULARY = frozenset(
    w for text in (*MESSAGE_STARTS, RESERVING.pattern, CAPPED.pattern, REDUCED.pattern, POST_CAPTURE_CAP.pattern,
                   PREFILL_TOKENS.pattern, OOM.pattern, OOM_FREE.pattern, OOM_FREE_OLD.pattern, _OOM_TEXT, ENGINE_MESSAGE_WORDS,
                   "avail mem usage elapsed conv_state ssm_state intermediate_ssm_state_cache dtype #tokens size "
                   "intermediate_conv_window_cache chunked_prefill_size max_prefill_tokens max_running_requests "
                   "context_len available_gpu_mem available_cpu_mem mem_fraction_static torch GB CUDA graph "
                   "OutOfMemoryError RuntimeError", " ".join(ITEMSIZE))
    for w in re.findall(r"[A-Za-z_#][\w#]{1,63}", text)
) | frozenset(t.strip("\"'(),.:;") for t in _OOM_TEXT.split() + ENGINE_MESSAGE_WORDS.split())

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
    usage_gib: float | None  # None: 0.3.x logged no usage and no begin line was seen


@dataclass(frozen=True, kw_only=True)
class OutOfMemory:
    """torch's out-of-memory message: the allocation that failed and what the card had free (GiB)."""

    requested_gib: float
    free_gib: float | None
    capacity_gib: float | None
    message: str

    @property
    def shortfall_gib(self) -> float | None:
        return None if self.free_gib is None else self.requested_gib - self.free_gib


@dataclass(frozen=True, kw_only=True)
class RankLog:
    """What one rank logged. The public keys are KEYS; the rest is what `logs check` needs besides."""

    pre_load_avail_gib: float | None = None  # first "Load weight begin" avail (~ pre_model_load_memory, local)
    weights_gib: float | None = None  # sum of "Load weight end" mem usage before the pools (target + draft)
    avail_after_load_gib: float | None = None  # last "Load weight end" avail before the pools (~ A, local)
    max_mamba_cache_size: int | None = None  # the Mamba line's K, else the cap line's
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
    logged_max_running_requests: int | None = None  # server_args' max_running_requests (what was asked)
    intermediate_ssm_gib: float | None = None
    intermediate_conv_window_gib: float | None = None
    capped_slots_per_request: int | None = None  # S, read off the cap line
    capped_requests: int | None = None  # N of the cap line
    summary: dict[str, Any] = field(default_factory=dict)
    milestone: Milestone = Milestone.START
    oom: OutOfMemory | None = None  # the last torch out-of-memory message
    last_batch: str | None = None  # "prefill" or "decode": the last batch line before the end of the log
    last_prefill_tokens: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in KEYS:
            value = getattr(self, key)
            if value is not None:
                out[key] = value.as_dict() if isinstance(value, Failure) else value
        return out

    @property
    def pre_load_gib(self) -> tuple[float | None, str]:
        """P for this rank and where it came from: the first "Load weight begin" avail, else the first "Load weight
        end" avail + its mem usage (the begin line is absent from an excerpt that starts at the end line)."""
        if self.pre_load_avail_gib is not None:
            return self.pre_load_avail_gib, "begin"
        first = self.loads[0] if self.loads else None
        if first is not None and first.usage_gib is not None:
            return round(first.avail_after_gib + first.usage_gib, 2), "end"
        return None, "none"


# the lines `logs check` compares, by the rank-0 field each fills (an excerpt may lack some; a log that stops at a
# failure never wrote the rest)
NEEDED = (("avail_after_load_gib", "`Load weight end. ... avail mem=...` (A and P)"),
          ("max_mamba_cache_size", "`Mamba Cache is allocated. ...` (K and the state sizes)"),
          ("kv_tokens", "`KV Cache is allocated. ... #tokens: ...` (the KV tokens and sizes)"),
          ("max_running_requests", "`max_total_num_tokens=..., max_running_requests=...` (the scheduler's summary)"))
# lines only an SGLang server writes (any one of them makes a text an SGLang boot log)
OWN_LINES = (LOAD_BEGIN, LOAD_END, SERVER_ARGS, MAMBA, *KV, POOL_END, SUMMARY, READY)


@dataclass(frozen=True, kw_only=True)
class BootLog:
    """A parsed boot log: rank 0's view (or the only rank's) and every rank's when several ranks logged."""

    rank0: RankLog
    rank0_tag: str
    ranks: dict[str, RankLog]
    stated_version: str | None = None  # the sglang version the log states (verify.log_version), if it says

    def as_dict(self) -> dict[str, Any]:
        out = self.rank0.as_dict()
        if len(self.ranks) > 1:
            out["ranks"] = {tag: r.as_dict() for tag, r in self.ranks.items()}
        return out

    def missing(self) -> list[str]:
        """The lines `logs check` needs that rank 0 did not log; none when a failure says where the boot stopped."""
        if self.rank0.failure is not None:
            return []
        return [line for key, line in NEEDED if getattr(self.rank0, key) is None]

    def found_nothing(self) -> bool:
        """No rank logged a number hybridplan reads, and no failure."""
        return self.rank0.failure is None and not any(r.as_dict() for r in self.ranks.values())

    def min_over_ranks(self, key: str) -> float | None:
        """The MIN over ranks, as the engine's world all-reduce takes it (P and A)."""
        values = [getattr(r, key) for r in self.ranks.values() if getattr(r, key) is not None]
        return min(values) if values else None

    def pre_load_over_ranks(self) -> tuple[float | None, str]:
        """P as the MIN over ranks of RankLog.pre_load_gib, and which line gave it ("begin", "end" or "none")."""
        values = [r.pre_load_gib for r in self.ranks.values() if r.pre_load_gib[0] is not None]
        return min(values) if values else (None, "none")


def _gib(value: str | None) -> float | None:
    return number(value)


def _oom(text: str) -> OutOfMemory | None:
    m = OOM.search(text)
    if m is None:
        return None
    free = capacity = None
    if (f := OOM_FREE.search(text, m.end())) is not None:
        capacity, free = float(f.group(1)) * _UNITS[f.group(2)], float(f.group(3)) * _UNITS[f.group(4)]
    elif (f := OOM_FREE_OLD.search(text, m.end())) is not None:
        capacity, free = float(f.group(1)) * _UNITS[f.group(2)], float(f.group(5)) * _UNITS[f.group(6)]
    return OutOfMemory(requested_gib=float(m.group(1)) * _UNITS[m.group(2)], free_gib=free, capacity_gib=capacity,
                       message=text)


class _Fold:
    """Accumulates one rank's numbers record by record; the target's lines win where a draft logs the same ones."""

    def __init__(self) -> None:
        self.v: dict[str, Any] = {}
        self.loads: list[LoadEvent] = []
        self.begin: float | None = None
        self.pools = False
        self.graphs: float | None = None
        self.cap_mrr: int | None = None
        self.post_capture_mrr: int | None = None
        self.summary: dict[str, Any] = {}
        self.milestone = Milestone.START

    def reach(self, m: Milestone) -> None:
        self.milestone = max(self.milestone, m)

    def add(self, t: str) -> None:
        if (i := t.find(LOAD_BEGIN)) >= 0 and (a := _gib(fields(t, i).get("avail mem"))) is not None:
            self.begin = a
            self.v.setdefault("pre_load_avail_gib", a)
            self.reach(Milestone.LOADING)
        if (i := t.find(LOAD_END)) >= 0:
            self._load_end(fields(t, i))
        if (i := t.find(SERVER_ARGS)) >= 0:
            f = fields(t, i)
            if (mfs := number(f.get("mem_fraction_static"))) is not None:
                self.v.setdefault("logged_mem_fraction_static", mfs)
            if (mrr := integer(f.get("max_running_requests"))) is not None:
                self.v.setdefault("logged_max_running_requests", mrr)
        if (m := RESERVING.search(t)) is not None:
            self.v.setdefault("mm_reservation_gib", float(m.group(1)))
        if (i := t.find(KV_DTYPE)) >= 0 and (d := fields(t, i).get("dtype")) is not None:
            self.v.setdefault("kv_dtype", d)  # older builds: model_runner.py::configure_kv_cache_dtype
        if (i := t.find(MAMBA)) >= 0:
            self._mamba(fields(t, i))
        if (i := max(t.find(KV[0]), t.find(KV[1]))) >= 0:
            self._kv(fields(t, i))
        if (i := t.find(POOL_END)) >= 0 and self.graphs is None:
            if (a := _gib(fields(t, i).get("avail mem"))) is not None:
                self.v["avail_after_pools_gib"] = a
                self.reach(Milestone.POOLS_DONE)
        if (m := CAPPED.search(t)) is not None:
            self.cap_mrr = int(m.group(1))
            self.v["capped_requests"] = int(m.group(1))
            self.v.setdefault("cap_k", int(m.group(2)))
            self.v["capped_slots_per_request"] = int(m.group(3))
        if (m := REDUCED.search(t)) is not None:
            self.cap_mrr = int(m.group(2))
        if (m := POST_CAPTURE_CAP.search(t)) is not None:
            self.post_capture_mrr = int(m.group(2))
        if (m := CAPTURE.search(t)) is not None:
            if m.group(1).lower() == "begin":
                self.reach(Milestone.CAPTURING)
            else:
                # 0.5.2x `mem usage=` after elapsed; 0.4.x `avail mem=…. mem usage=…` (either order)
                usage = _gib(fields(t, m.end()).get("mem usage"))
                self.graphs = (self.graphs or 0.0) + (usage or 0.0)
                self.reach(Milestone.CAPTURED)
        if (i := t.find(SUMMARY)) >= 0 and (i == 0 or not (t[i - 1].isalnum() or t[i - 1] in "._")):
            self._summary(fields(t, i))
        if READY in t:
            self.reach(Milestone.READY)
        if (m := PREFILL_TOKENS.search(t)) is not None:
            self.v["last_batch"], self.v["last_prefill_tokens"] = "prefill", int(m.group(1))
        elif t.startswith(DECODE):
            self.v["last_batch"] = "decode"
        if (oom := _oom(t)) is not None:
            self.v["oom"] = oom

    def _load_end(self, f: dict[str, Any]) -> None:
        """`Load weight end. [elapsed=…, ]type=…, [dtype=…, ]avail mem=A GB[, mem usage=W GB].` (0.3.x: no usage)."""
        after = _gib(f.get("avail mem"))
        if after is None:
            return
        usage = _gib(f.get("mem usage"))
        if usage is None and self.begin is not None:
            usage = round(self.begin - after, 2)
        if not self.pools:
            self.loads.append(LoadEvent(avail_before_gib=self.begin, avail_after_gib=after, usage_gib=usage))
        self.begin = None
        self.reach(Milestone.LOADED)

    def _mamba(self, f: dict[str, Any]) -> None:
        """memory_pool.py::MambaPool.__init__ (no comma before `intermediate`; K absent before 0.5.1x)."""
        conv, ssm = _gib(f.get("conv_state size")), _gib(f.get("ssm_state size"))
        if conv is None or ssm is None or "conv_state_gib" in self.v:
            return
        self.pools = True
        if (k := integer(f.get("max_mamba_cache_size"))) is not None:
            self.v["max_mamba_cache_size"] = k
        self.v["conv_state_gib"], self.v["ssm_state_gib"] = conv, ssm
        for key, name in (("intermediate_ssm_gib", "intermediate_ssm_state_cache size"),
                          ("intermediate_conv_window_gib", "intermediate_conv_window_cache size")):
            if (x := _gib(f.get(name))) is not None:
                self.v[key] = x
        self.reach(Milestone.POOLS)

    def _kv(self, f: dict[str, Any]) -> None:
        """memory_pool.py::KVCache._finalize_allocation_log (MHA: K and V; MLA/DSA: one KV size)."""
        T = integer(f.get("#tokens"))
        if T is None or "kv_tokens" in self.v:
            return
        k, v, kv = _gib(f.get("K size")), _gib(f.get("V size")), _gib(f.get("KV size"))
        if kv is None and (k is None or v is None):
            return
        self.pools = True
        if f.get("dtype"):
            self.v["kv_dtype"] = f["dtype"]
        self.v["kv_tokens"] = T
        if kv is not None:
            self.v["k_gib"] = kv
        else:
            self.v["k_gib"], self.v["v_gib"] = k, v
        self.reach(Milestone.POOLS)

    def _summary(self, f: dict[str, Any]) -> None:
        """scheduler.py (tp_rank 0): `max_total_num_tokens=T, [chunked_prefill_size=c, ]max_prefill_tokens=p,
        max_running_requests=n, context_len=L[, available_gpu_mem=a GB]` (0.3.x has no chunk, 0.4.x no avail)."""
        if "max_running_requests" not in f and "context_len" not in f:
            return
        out = {}
        for key, raw in f.items():
            if " " in key:
                continue
            x = integer(raw)
            out[key] = x if x is not None else number(raw)
        self.summary = {k: x for k, x in out.items() if x is not None}
        self.reach(Milestone.SERVING)

    def result(self, failure: Failure | None) -> RankLog:
        v = dict(self.v)
        cap_k = v.pop("cap_k", None)
        if "max_mamba_cache_size" not in v and cap_k is not None:
            v["max_mamba_cache_size"] = cap_k  # an excerpt without the Mamba line: K from the cap line
        if self.loads:
            usages = [e.usage_gib for e in self.loads if e.usage_gib is not None]
            if usages:
                v["weights_gib"] = round(sum(usages), 2)
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


def nothing_found(name: str) -> BadInput:
    """The refusal of a text that holds no SGLang boot line: the lines it would need."""
    return BadInput(f"{name}: none of the lines SGLang writes at startup was found (a check needs "
                    f"{'; '.join(line for _, line in NEEDED)}): not an SGLang boot log?")


def parse_log(text: str, *, name: str = "log", max_chars: int = MAX_LOG_BYTES) -> BootLog:
    """Parse a boot log. Lines without a rank tag (the launcher's, tracebacks before any tag) count for rank 0.
    Raises BadInput naming `name` when the text is over its bounds."""
    check_bounds(text, name, max_chars)
    records = split_records(text, _VOCABULARY, MESSAGE_STARTS)
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
    from hybridplan.engine.sglang.log_version import stated_in_log

    return BootLog(rank0=rank0, rank0_tag=tag0, ranks=ranks, stated_version=stated_in_log(text.splitlines()))


def _with_failure(r: RankLog, failure: Failure) -> RankLog:
    values = {f.name: getattr(r, f.name) for f in dc_fields(r)}
    values["failure"] = failure
    return RankLog(**values)
