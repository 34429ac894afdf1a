"""SGLang as the conformance suite sees it: its driver and schema, the scenarios every release is checked on (the
release-difference cases, the default --mem-fraction-static grid and a seeded sample, over materialized checkpoint
directories), hybridplan's answers (model_side.predict) and the rule behind each field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hybridplan.conformance.compare import Answer, Case, Comparison
from hybridplan.conformance.oracle import Oracle
from hybridplan.conformance.sglang import schema
from hybridplan.conformance.sglang.fixtures import ModelDir, materialize
from hybridplan.conformance.sglang.model_side import RULES, predict
from hybridplan.conformance.sglang.scenarios import Scenario, default_fraction_grid, generate, release_scenarios

SAMPLED = 500  # sampled scenarios (seed 0) each release is recorded on, beside its release cases and the grid


def families(models: Mapping[str, ModelDir]) -> dict[str, str]:
    """Target model key -> "family:architecture", as the tally counts it."""
    from hybridplan.models.loader import load_model

    return {k: f"{load_model(m.path).family}:{m.architecture}" for k, m in models.items() if not m.is_draft}


def as_cases(scenarios: Sequence[Scenario], models: Mapping[str, ModelDir], version: str) -> list[Case]:
    """`scenarios` with hybridplan's answers as release `version`."""
    family = families(models)
    return [Case(id=sc.id, payload=sc.payload(), predicted=predict(sc, version), family=family.get(sc.model, "?"),
                 tags=sc.tags) for sc in scenarios]


def cases(version: str, root: Path) -> list[Case]:
    """Release `version`'s scenarios, their checkpoint directories written under `root`."""
    models = materialize(root)
    return as_cases(release_scenarios(models) + default_fraction_grid(models) + generate(models, SAMPLED, seed=0),
                    models, version)


def release_pythonpath(python: str, version: str) -> str | None:
    """The PYTHONPATH under which the oracle interpreter imports release `version` (unpacked by
    conformance/setup_releases.sh into <venv>/releases/<version>/sys_path.txt); None for its installed release
    (the runner checks the driver reports `version`)."""
    listing = Path(python).absolute().parent.parent / "releases" / version / "sys_path.txt"
    if not listing.exists():
        return None
    return ":".join(line for line in listing.read_text().splitlines() if line.strip()) or None


def fields(answer: Answer) -> dict[str, Any]:
    """The compared fields: every section's, as section.name."""
    return {f"{s}.{k}": v for s in schema.SECTIONS for k, v in (answer.get(s) or {}).items()}


def same_refusal(engine: Answer, ours: Answer) -> bool:
    """Same type and message; argparse errors by type only (the engine prints usage text, hybridplan one line)."""
    return bool(engine["type"] == ours["type"] and (engine["stage"] == "parse" or engine["message"] == ours["message"]))


def outcome(answer: Answer) -> str:
    """How a scenario ended on the engine side: the _handle_max_mamba_cache branch, or the refusal."""
    err = answer.get("error")
    if err:
        return f"refused:{err['stage']}:{err['type']}"
    sizing = answer.get("sizing")
    if sizing:
        return f"branch:{sizing['branch']}"
    return "no-budget"


def default_mfs(case: Case, answer: Answer) -> str | None:
    """A scenario whose --mem-fraction-static the engine defaulted, by GPU, attention DP and modality."""
    if "mfs:default" not in case.tags or "resolved" not in answer:
        return None
    dp = "attn_dp" if "attn_dp" in case.tags else "no_dp"
    return f"{case.payload['gpu_mib']}:{dp}:{'vlm' if 'vlm' in case.tags else 'text'}"


ORACLE = Oracle(
    name="sglang", engine="sglang", driver="sglang.driver",
    setup="conformance/setup_oracle.sh, then conformance/setup_releases.sh", header=schema.header, result=schema.result, cases=cases, pythonpath=release_pythonpath, env_prefix="SGLANG_",
    comparison=Comparison(fields=fields, rules=RULES, same_refusal=same_refusal), outcome=outcome,
    counters={"default_mfs": default_mfs})
