"""The public boot logs (data/boot_logs.yaml) as the planner's evidence (planner.evidence.EvidenceSource): each boot
that printed its --mem-fraction-static, served (booted) or failed in its phase, with the prefill chunk and request cap
its scheduler line printed."""

from __future__ import annotations

import shlex
from functools import lru_cache
from typing import Sequence

from hybridplan.hardware.catalog import GPU
from hybridplan.planner.evidence import EvidencePoint, model_key, same_class


def _quantization(command: str | None) -> str | None:
    """The --quantization a logged command loads its checkpoint under (`--flag value` or `--flag=value`)."""
    words = shlex.split(command or "")
    for i, w in enumerate(words):
        if w.startswith("--quantization="):
            return w.split("=", 1)[1]
        if w == "--quantization" and i + 1 < len(words):
            return words[i + 1]
    return None


@lru_cache(maxsize=1)
def _points() -> tuple[EvidencePoint, ...]:
    from hybridplan.verify.public_logs import load

    out = []
    for r in load().records:
        v = r.values
        if v.mem_fraction_static is None:
            continue
        out.append(EvidencePoint(
            kind="boot log", label=r.id, source=r.url, gpu=r.gpu,
            model=model_key({"model_path": r.model, "quantization": _quantization(r.command)}) if r.model else None,
            outcome="failed" if v.failure else "served", phase=v.failure, mem_fraction_static=v.mem_fraction_static,
            chunked_prefill_size=v.chunked_prefill_size, max_running_requests=v.max_running_requests, tp=r.tp,
            build=r.sglang_version))
    return tuple(out)


def log_evidence(gpu: GPU, version: str) -> Sequence[EvidencePoint]:
    """The public boot logs on the card, or on a card whose fraction evidence transfers to it (any release: the
    fraction's meaning, P x (1 - f) of slack, has not changed across them)."""
    return tuple(p for p in _points() if p.gpu == gpu.id or same_class(gpu, p.gpu))
