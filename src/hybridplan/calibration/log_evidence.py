"""The public boot logs (data/boot_logs.yaml) as the planner's evidence (planner.evidence.EvidenceSource): each boot
that printed its --mem-fraction-static, served (booted) or failed in its phase, with the prefill chunk and request cap
its scheduler line printed."""

from __future__ import annotations

import shlex
from functools import lru_cache
from typing import Sequence

from hybridplan.hardware.catalog import GPU
from hybridplan.evidence import EvidencePoint, model_key, same_class


def _model(model: str, command: str | None) -> str:
    """planner.evidence.model_key of a logged launch: its catalog id with the --quantization and speculative setup its
    command names, read as the engine's parser groups the flags (the command's local --model-path, also as an MTP
    draft path, stands for the catalog id)."""
    from hybridplan.engine.api import for_version
    from hybridplan.engine.argv import value_of

    argv, reg = tuple(shlex.split(command or "")), for_version(None).registry()
    path, algorithm = value_of(argv, "model_path", reg), value_of(argv, "speculative_algorithm", reg)
    draft = value_of(argv, "speculative_draft_model_path", reg) if algorithm else None
    return model_key({"model_path": model, "quantization": value_of(argv, "quantization", reg),
                      "speculative_algorithm": algorithm,
                      "speculative_draft_model_path": model if algorithm and draft in (None, path) else draft})


@lru_cache(maxsize=None)
def _point(record_id: str) -> EvidencePoint:
    """One boot's evidence point, its model key read from its command once (only for cards that ask)."""
    from hybridplan.calibration.public_logs import load
    from hybridplan.engine.api import for_version  # the engine whose parser reads these logs (see _model)

    r = next(r for r in load().records if r.id == record_id)
    v = r.values
    assert v.mem_fraction_static is not None  # log_evidence asks only for boots that printed it
    return EvidencePoint(
        engine=for_version(None).name, kind="boot log", label=r.id, source=r.url, gpu=r.gpu, model=_model(r.model, r.command) if r.model else None,
        outcome="failed" if v.failure else "served", phase=v.failure, mem_fraction_static=v.mem_fraction_static,
        chunked_prefill_size=v.chunked_prefill_size, max_running_requests=v.max_running_requests, tp=r.tp,
        build=r.sglang_version)


def log_evidence(engine: str, gpu: GPU, version: str) -> Sequence[EvidencePoint]:
    """The public boot logs that printed their --mem-fraction-static on the card, or on a card whose fraction
    evidence transfers to it (any release: the fraction's meaning, P x (1 - f) of slack, has not changed across
    them)."""
    from hybridplan.calibration.public_logs import load
    from hybridplan.engine.api import for_version

    if engine != for_version(None).name:  # the logs are that engine's (its parser reads them: _model)
        return ()
    return tuple(_point(r.id) for r in load().records
                 if r.values.mem_fraction_static is not None and (r.gpu == gpu.id or same_class(gpu, r.gpu)))
