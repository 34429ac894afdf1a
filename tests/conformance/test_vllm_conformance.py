"""hybridplan's model of vLLM 0.33.0 equals vLLM's own KV cache planning (conformance/setup_vllm_oracle.sh unpacks
the release beside the oracle venv's CPU torch) on every field of 320 generated scenarios."""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from hybridplan.conformance import vllm_conformance as vc

pytestmark = pytest.mark.conformance
ROOT = Path(__file__).resolve().parents[2]
VERSION = "0.33.0"


@pytest.fixture(scope="module")
def vllm_oracle(oracle_python):
    """(python, PYTHONPATH) of the vLLM oracle, built or reused beside the oracle venv."""
    venv = Path(oracle_python).absolute().parent.parent
    proc = subprocess.run(["bash", str(ROOT / "conformance" / "setup_vllm_oracle.sh"), str(venv), VERSION],
                          capture_output=True, text=True, timeout=1500)
    if proc.returncode != 0:
        why = f"the vLLM oracle could not be set up: {proc.stderr.strip().splitlines()[-1:]}"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    python, path = proc.stdout.strip().splitlines()[-1].split()
    return python, path


def test_every_field_equals_vllm(vllm_oracle):
    scenarios = vc.scenarios(VERSION)
    header, results = vc.run_oracle(*vllm_oracle, [sc["payload"] for sc in scenarios])
    drifts = [d for sc in scenarios for d in vc.compare(results[sc["id"]], sc["predicted"])]
    outcomes = Counter("refused" if "error" in results[sc["id"]] else results[sc["id"]]["mamba_cache_mode"]
                       for sc in scenarios)
    print(f"\nvllm {header['version']}: {len(scenarios)} scenarios, every field compared, {len(drifts)} drifts "
          f"({dict(outcomes)})")
    assert header["version"] == VERSION
    assert len(scenarios) >= 300
    lines = [f"{d.scenario} {d.field}: engine {d.engine!r} != hybridplan {d.hybridplan!r}" for d in drifts]
    assert not lines, "\n".join(lines[:40])
    assert outcomes["align"] >= 100 and outcomes["none"] >= 100 and outcomes["refused"] >= 5
