"""The public boot-log data set (data/boot_logs.yaml): numbers read off public SGLang boot logs, with their links.

Loaded into frozen dataclasses and validated: unknown keys, a card missing from gpus.yaml, a bad failure phase or a
duplicate id is a BadInput naming the field. Values are GiB as the engine prints them ("GB" means GiB).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Optional, TypeVar

from hybridplan.errors import BadInput
from hybridplan.hardware.catalog import lookup

PHASES = ("weights", "kv_pool", "state_pool", "cuda_graph", "first_request")
_URL_PREFIXES = ("https://", "shared/data/logs/")


if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_T = TypeVar("_T", bound="DataclassInstance")


@dataclass(frozen=True)
class Capture:
    """One "Capture ... graph end" line: which graph, its mem usage and the avail mem after it."""

    role: str
    capture_gib: float
    avail_gib: Optional[float] = None


@dataclass(frozen=True)
class Values:
    """The numbers one boot log printed; None where the log (or its public part) did not show the line."""

    torch_total_gib: Optional[float] = None
    init_mem_usage_gib: Optional[float] = None
    init_avail_gib: Optional[float] = None
    load_begin_avail_gib: Optional[float] = None
    weights_gib: Optional[float] = None
    load_end_avail_gib: Optional[float] = None
    mamba_cache_size: Optional[int] = None
    conv_state_gib: Optional[float] = None
    ssm_state_gib: Optional[float] = None
    kv_tokens: Optional[int] = None
    k_gib: Optional[float] = None
    v_gib: Optional[float] = None
    kv_dtype: Optional[str] = None
    pool_end_avail_gib: Optional[float] = None
    captures: tuple[Capture, ...] = ()
    max_total_num_tokens: Optional[int] = None
    max_running_requests: Optional[int] = None
    chunked_prefill_size: Optional[int] = None
    context_len: Optional[int] = None
    available_gpu_mem_gib: Optional[float] = None
    mem_fraction_static: Optional[float] = None
    failure: Optional[str] = None
    failure_message: Optional[str] = None


@dataclass(frozen=True)
class BootLogRecord:
    """One public boot: where it was read, the card and launch, and the numbers."""

    id: str
    url: str
    gpu: str
    values: Values
    sglang_version: Optional[str] = None
    model: Optional[str] = None
    command: Optional[str] = None
    note: Optional[str] = None
    gpu_count: Optional[int] = None
    tp: Optional[int] = None
    pp: Optional[int] = None
    dp: Optional[int] = None
    ep: Optional[int] = None


@dataclass(frozen=True)
class FactSource:
    """One observed value of a card fact and the records it comes from."""

    value: float
    records: tuple[str, ...]
    tp: Optional[int] = None
    note: Optional[str] = None


@dataclass(frozen=True)
class CardFacts:
    """Per card: torch's total and the CUDA context as observed."""

    gpu: str
    torch_total_gib: tuple[FactSource, ...] = ()
    cuda_context_gib: tuple[FactSource, ...] = ()


@dataclass(frozen=True)
class PublicLogs:
    """The whole data set."""

    records: tuple[BootLogRecord, ...]
    card_facts: tuple[CardFacts, ...]

    def by_id(self, record_id: str) -> BootLogRecord:
        for r in self.records:
            if r.id == record_id:
                return r
        raise BadInput(f"boot_logs.yaml: no record {record_id!r}")


def _build(cls: type[_T], raw: Any, where: str, nested: dict[str, Any] | None = None) -> _T:
    """A frozen dataclass from a mapping; an unknown or missing key, or a wrong type, names the field."""
    if not isinstance(raw, dict):
        raise BadInput(f"boot_logs.yaml: {where}: expected a mapping")
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise BadInput(f"boot_logs.yaml: {where}.{unknown[0]}: unknown field")
    kwargs = dict(raw)
    for key, convert in (nested or {}).items():
        if key in kwargs:
            kwargs[key] = convert(kwargs[key], f"{where}.{key}")
    for name, value in kwargs.items():
        _check_type(name, value, known[name].type, f"{where}.{name}")
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise BadInput(f"boot_logs.yaml: {where}: {exc}") from None


def _check_type(name: str, value: Any, annotation: Any, where: str) -> None:
    text = str(annotation)
    if value is None or "tuple" in text or name in ("values",):
        return
    if "int" in text and (not isinstance(value, int) or isinstance(value, bool)):
        raise BadInput(f"boot_logs.yaml: {where}: expected an integer, got {value!r}")
    if "float" in text and (not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0):
        raise BadInput(f"boot_logs.yaml: {where}: expected a non-negative number, got {value!r}")
    if "str" in text and not isinstance(value, str):
        raise BadInput(f"boot_logs.yaml: {where}: expected a string, got {value!r}")


def _captures(raw: Any, where: str) -> tuple[Capture, ...]:
    if not isinstance(raw, list):
        raise BadInput(f"boot_logs.yaml: {where}: expected a list")
    return tuple(_build(Capture, c, f"{where}[{i}]") for i, c in enumerate(raw))


def _values(raw: Any, where: str) -> Values:
    v = _build(Values, raw, where, {"captures": _captures})
    if v.failure is not None and v.failure not in PHASES:
        raise BadInput(f"boot_logs.yaml: {where}.failure: {v.failure!r} is not one of {', '.join(PHASES)}")
    if v.failure_message is not None and (v.failure is None or len(v.failure_message) > 200):
        raise BadInput(f"boot_logs.yaml: {where}.failure_message: needs a failure phase and at most 200 characters")
    return v


def _record(raw: Any, where: str) -> BootLogRecord:
    r = _build(BootLogRecord, raw, where, {"values": _values})
    if not r.url.startswith(_URL_PREFIXES):
        raise BadInput(f"boot_logs.yaml: {where}.url: {r.url!r} is not a public https link or a shared log")
    if _card_id(r.gpu, f"{where}.gpu") != r.gpu:
        raise BadInput(f"boot_logs.yaml: {where}.gpu: use the catalog id {lookup(r.gpu).id!r}, not an alias")
    return r


def _card_id(name: str, where: str) -> str:
    """The catalog id of a card; one missing from gpus.yaml names the field."""
    try:
        return lookup(name).id
    except BadInput as exc:
        raise BadInput(f"boot_logs.yaml: {where}: {exc.message}") from None


def _sources(raw: Any, where: str) -> tuple[FactSource, ...]:
    if not isinstance(raw, list):
        raise BadInput(f"boot_logs.yaml: {where}: expected a list")
    out = []
    for i, item in enumerate(raw):
        item = dict(item) if isinstance(item, dict) else item
        if isinstance(item, dict) and isinstance(item.get("records"), list):
            item["records"] = tuple(item["records"])
        out.append(_build(FactSource, item, f"{where}[{i}]"))
    return tuple(out)


def parse(data: Any) -> PublicLogs:
    """The data set from the parsed YAML; every record id a card fact cites must exist."""
    if not isinstance(data, dict) or set(data) != {"records", "card_facts"}:
        raise BadInput("boot_logs.yaml: expected exactly the keys records and card_facts")
    records = tuple(_record(r, f"records[{i}]") for i, r in enumerate(data["records"]))
    ids = [r.id for r in records]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup is not None:
        raise BadInput(f"boot_logs.yaml: records: id {dup!r} is used twice")
    facts = []
    for gpu, raw in (data["card_facts"] or {}).items():
        where = f"card_facts.{gpu}"
        _card_id(gpu, where)
        f = _build(CardFacts, {"gpu": gpu, **(raw or {})}, where,
                   {"torch_total_gib": _sources, "cuda_context_gib": _sources})
        for src in (*f.torch_total_gib, *f.cuda_context_gib):
            missing = [rid for rid in src.records if rid not in ids]
            if missing:
                raise BadInput(f"{where}: cites unknown record {missing[0]!r}")
        facts.append(f)
    return PublicLogs(records=records, card_facts=tuple(facts))


@lru_cache(maxsize=1)
def load() -> PublicLogs:
    """The packaged data set."""
    from hybridplan.packaged import data_yaml

    return parse(data_yaml("boot_logs.yaml"))
