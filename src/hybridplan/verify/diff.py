"""`results diff`: what changed between two builds for the same GPU, page, selection, flags and workload."""

from __future__ import annotations

from typing import Any

from hybridplan.verify.bench import summary
from hybridplan.verify.store import Run, canonical

_BOOT = ("max_mamba_cache_size", "kv_tokens", "max_running_requests", "weights_gib", "cuda_graph_gib",
         "avail_after_pools_gib")
# the numbers a build change moves, in the order they are shown
FIELDS = ("outcome", "failure_phase", *_BOOT, "tpot_ms", "ttft_ms", "output_throughput_tok_s", "accept_length")


def _same_point(run: Run) -> str:
    k = run.key
    return canonical([k.gpu, k.page, k.selection, list(k.flags), list(k.env), k.workload])


def facts(run: Run) -> dict[str, Any]:
    """The compared numbers of one run."""
    out: dict[str, Any] = {"outcome": run.outcome, "failure_phase": (run.failure or {}).get("phase")}
    out.update({k: run.boot.get(k) for k in _BOOT})
    out.update(summary(run.bench))
    return {k: out.get(k) for k in FIELDS}


def diff_runs(a: list[Run], b: list[Run]) -> dict[str, Any]:
    """Pair runs by point; list the fields that differ (with the relative change of numbers) and the unpaired."""
    by_a = {_same_point(r): r for r in a}
    by_b = {_same_point(r): r for r in b}
    changed: list[dict[str, Any]] = []
    same = 0
    for key in by_a.keys() & by_b.keys():
        ra, rb = by_a[key], by_b[key]
        fa, fb = facts(ra), facts(rb)
        fields = []
        for name in FIELDS:
            va, vb = fa[name], fb[name]
            if va == vb:
                continue
            change = None
            if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and va:
                change = round((vb - va) / abs(va) * 100, 2)
            fields.append({"field": name, "a": va, "b": vb, "change_pct": change})
        if fields:
            changed.append({"selection": ra.key.selection, "sweep": ra.sweep, "gpu": ra.key.gpu,
                            "page": ra.key.page, "runs": [ra.id, rb.id], "fields": fields})
        else:
            same += 1
    changed.sort(key=lambda c: c["runs"][0])
    return {"changed": changed, "unchanged": same, "only_a": _unpaired(by_a, by_b), "only_b": _unpaired(by_b, by_a)}


def _unpaired(mine: dict[str, Run], other: dict[str, Run]) -> list[dict[str, Any]]:
    runs = sorted((mine[k] for k in mine.keys() - other.keys()), key=lambda r: r.id or 0)
    return [{"selection": r.key.selection, "sweep": r.sweep, "gpu": r.key.gpu, "page": r.key.page, "run": r.id}
            for r in runs]
