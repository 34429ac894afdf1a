"""vLLM as the conformance suite sees it: its driver and schema, the scenario grid every release is checked on with
hybridplan's answers, where a release's files sit beside the oracle interpreter, and the rule behind each field."""

from __future__ import annotations

from pathlib import Path

from hybridplan.conformance.compare import Answer, Case, Comparison
from hybridplan.conformance.oracle import Oracle
from hybridplan.conformance.runner import NoEngine
from hybridplan.conformance.vllm import schema
from hybridplan.conformance.vllm.model_side import RULES, fields, same_refusal
from hybridplan.conformance.vllm.scenarios import scenarios


def cases(version: str, root: Path) -> list[Case]:
    """Release `version`'s scenarios (the driver reads no files: `root` stays empty)."""
    return scenarios(version)


def release_pythonpath(python: str, version: str) -> str:
    """The release's files and their pure-Python dependencies beside the oracle interpreter
    (conformance/setup_vllm_oracle.sh writes <venv>/vllm/<version>/pythonpath); NoEngine where they are not."""
    venv = Path(python).absolute().parent.parent
    listing = venv / "vllm" / version / "pythonpath"
    if not listing.exists():
        raise NoEngine(f"vLLM {version} is not unpacked beside {python}: run conformance/setup_vllm_oracle.sh "
                       f"{venv} {version}")
    return listing.read_text().strip()


def outcome(answer: Answer) -> str:
    """The state's cache mode (none, align, all), or refused."""
    return "refused" if "error" in answer else str(answer["mamba_cache_mode"])


ORACLE = Oracle(
    name="vllm", engine="vllm", driver="vllm.driver", setup="conformance/setup_vllm_oracle.sh VENV VERSION",
    header=schema.header, result=schema.result, cases=cases, pythonpath=release_pythonpath, env_prefix="VLLM_",
    comparison=Comparison(fields=fields, rules=RULES, same_refusal=same_refusal, gate=("parsed",)), outcome=outcome)
