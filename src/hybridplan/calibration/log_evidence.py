"""The public boot logs (data/boot_logs.yaml) as the planner's evidence (planner.evidence.EvidenceSource): each boot
that printed its --mem-fraction-static, served (booted) or failed in its phase, with the prefill chunk and request cap
its scheduler line printed. Derived here (log_points) into the evidence table (evidence_table.py), which a
verdict reads."""

from __future__ import annotations

import shlex
from hybridplan.evidence import EvidencePoint, model_key


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


def log_points() -> tuple[EvidencePoint, ...]:
    """Every boot that printed its --mem-fraction-static, as an evidence point (what the evidence table ships)."""
    from hybridplan.calibration.public_logs import load
    from hybridplan.engine.api import for_version  # the engine whose parser reads these logs (see _model)

    engine = for_version(None).name
    return tuple(EvidencePoint(
        engine=engine, kind="boot log", label=r.id, source=r.url, gpu=r.gpu,
        model=_model(r.model, r.command) if r.model else None, outcome="failed" if r.values.failure else "served",
        phase=r.values.failure, mem_fraction_static=r.values.mem_fraction_static,
        chunked_prefill_size=r.values.chunked_prefill_size, max_running_requests=r.values.max_running_requests,
        tp=r.tp, build=r.sglang_version) for r in load().records if r.values.mem_fraction_static is not None)
