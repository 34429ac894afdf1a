"""Predicted vs logged, for every public boot log in data/boot_logs.yaml: the card's visible memory, P (free before
the weights), the weights, graph-capture memory, K and KV tokens, each with its error.

Two predictions of the pools: from the card and the model alone (what `explain --gpu` says before a boot), and from
the log's own P and A (the engine rule's exactness, without the estimates). A field stays None where the log does not
show it or the model is not in the catalog. Used by benchmarks/calibration_table.py (docs/calibration.md) and the tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hybridplan.errors import HybridPlanError
from hybridplan.hardware.catalog import lookup
from hybridplan.models.catalog import lookup as catalog_entry
from hybridplan.calibration.public_logs import BootLogRecord, Values, load

GIB = 1 << 30
# the headroom parts allocated between "Capture ... begin" and "Capture ... end" (planner.headroom part names)
CAPTURE_PARTS = ("graph_pool", "graph_shapes", "decode_graph_buffers", "prefill_graph_buffers")


@dataclass(frozen=True, kw_only=True)
class Pair:
    """One quantity: the prediction, the logged value, and the error (predicted - logged)."""

    predicted: float | None
    logged: float | None

    @property
    def error(self) -> float | None:
        if self.predicted is None or self.logged is None:
            return None
        return self.predicted - self.logged

    @property
    def relative(self) -> float | None:
        e = self.error
        return None if e is None or not self.logged else e / self.logged


@dataclass(frozen=True, kw_only=True)
class Row:
    """One public boot log against the model."""

    record: BootLogRecord
    command: str | None  # the launch command the pools were predicted for (None: the model is not in the catalog)
    visible_gib: Pair
    pre_load_gib: Pair
    weights_gib: Pair
    capture_gib: Pair
    K: Pair  # from the card and the model alone
    kv_tokens: Pair
    engine_K: Pair  # from the log's own P and A (the engine rule alone)
    engine_kv_tokens: Pair
    note: str = ""


def _logged_pre_load(v: Values) -> float | None:
    if v.load_begin_avail_gib is not None:
        return v.load_begin_avail_gib
    if v.load_end_avail_gib is not None and v.weights_gib is not None:
        return v.load_end_avail_gib + v.weights_gib  # P = A + mem usage
    return None


def _command(r: BootLogRecord) -> str | None:
    """The command to predict for: the record's own (model path from the catalog), else the model at its TP."""
    if r.model is None or catalog_entry(r.model) is None:
        return None
    from hybridplan.engine.api import parse_command

    flags = ["--model-path", r.model]
    if r.command:
        argv = list(parse_command(r.command).argv)
        own = next((argv[i + 1] for i, tok in enumerate(argv[:-1]) if tok in ("--model-path", "--model")), None)
        skip = False
        for i, tok in enumerate(argv):
            if skip:
                skip = False
            elif tok in ("--model-path", "--model"):
                skip = True
            elif not tok.startswith(("--model-path=", "--model=")):
                # a draft that is the model's own local checkpoint (an MTP head) is the catalog model too
                flags.append(r.model if own is not None and tok == own and i and
                             argv[i - 1] == "--speculative-draft-model-path" else tok)
    else:
        if (r.tp or 1) > 1:
            flags += ["--tp-size", str(r.tp)]
        if r.values.mem_fraction_static is not None:
            flags += ["--mem-fraction-static", repr(r.values.mem_fraction_static)]
    return "python -m sglang.launch_server " + " ".join(flags)


def _none() -> Pair:
    return Pair(predicted=None, logged=None)


def compare(r: BootLogRecord) -> Row:
    """The prediction for one record."""
    from hybridplan.engine.api import explain
    from hybridplan.engine.api import context_estimate_gib, visible_estimate

    gpu = lookup(r.gpu)
    v = r.values
    world = (r.tp or 1) * (r.pp or 1)
    visible = visible_estimate(gpu).value
    pre = Pair(predicted=visible - context_estimate_gib(gpu, world), logged=_logged_pre_load(v))
    vis = Pair(predicted=visible, logged=v.torch_total_gib)
    capture_logged = max((c.capture_gib for c in v.captures), default=None)
    command = _command(r)
    blank = dict(weights_gib=Pair(predicted=None, logged=v.weights_gib),
                 capture_gib=Pair(predicted=None, logged=capture_logged),
                 K=Pair(predicted=None, logged=v.mamba_cache_size), kv_tokens=Pair(predicted=None, logged=v.kv_tokens),
                 engine_K=Pair(predicted=None, logged=v.mamba_cache_size),
                 engine_kv_tokens=Pair(predicted=None, logged=v.kv_tokens))
    if command is None:
        return Row(record=r, command=None, visible_gib=vis, pre_load_gib=pre, note="model not in the catalog", **blank)
    try:
        d = explain(command, gpu=gpu)
    except HybridPlanError as exc:
        return Row(record=r, command=command, visible_gib=vis, pre_load_gib=pre, note=exc.message, **blank)
    mem = d.get("memory") or {}
    tl, w = mem.get("timeline") or {}, mem.get("weights") or {}
    weights = (w.get("target_bytes_per_rank") or {}).get("value")
    parts = {p["name"]: p["bytes"] for p in tl.get("headroom_parts") or ()}
    capture = sum(parts.get(n, 0) for n in CAPTURE_PARTS) / GIB if parts else None
    engine: dict[str, Any] = {}
    A = v.load_end_avail_gib
    P = _logged_pre_load(v)
    if A is not None and P is not None:
        e = explain(command, gpu=gpu, available_gib=A, pre_load_gib=P)
        engine = {"K": e.get("max_mamba_cache_size"), "T": e.get("max_total_num_tokens")}
    return Row(
        record=r, command=command, visible_gib=vis, pre_load_gib=pre,
        weights_gib=Pair(predicted=weights / GIB if weights is not None else None, logged=v.weights_gib),
        capture_gib=Pair(predicted=capture, logged=capture_logged),
        K=Pair(predicted=d.get("max_mamba_cache_size"), logged=v.mamba_cache_size),
        kv_tokens=Pair(predicted=d.get("max_total_num_tokens"), logged=v.kv_tokens),
        engine_K=Pair(predicted=engine.get("K"), logged=v.mamba_cache_size),
        engine_kv_tokens=Pair(predicted=engine.get("T"), logged=v.kv_tokens),
        note=(d.get("error") or {}).get("message", "") if isinstance(d.get("error"), dict) else "")


def compare_all() -> list[Row]:
    """Every public record, in file order."""
    return [compare(r) for r in load().records]
