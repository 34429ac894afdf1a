"""hybridplan's model of each modelled vLLM release equals that release's own KV cache planning
(conformance/setup_vllm_oracle.sh unpacks the release beside the oracle venv's CPU torch) on every field of the
generated scenarios: >= 300 for each supported release (0.33.0; 0.24.0, which most public boot logs use; 0.20.1 and
0.20.0, the older public boots')."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import run_setup

from hybridplan.conformance import vllm_conformance as vc

pytestmark = pytest.mark.conformance
# release -> (scenarios at least, align and none outcomes at least)
RELEASES = {"0.33.0": (300, 100), "0.24.0": (300, 100), "0.20.1": (300, 100), "0.20.0": (300, 100)}


@pytest.fixture(scope="module", params=sorted(RELEASES))
def vllm_oracle(request, oracle_python):
    """(version, python, PYTHONPATH) of the vLLM oracle for one release, built or reused beside the oracle venv."""
    version = request.param
    venv = Path(oracle_python).absolute().parent.parent
    python, path = run_setup("setup_vllm_oracle.sh", str(venv), version,
                             failure="the vLLM oracle could not be set up").split()
    return version, python, path


def test_every_field_equals_vllm(vllm_oracle):
    version, python, path = vllm_oracle
    scenarios = vc.scenarios(version)
    header, results = vc.run_oracle(python, path, [sc["payload"] for sc in scenarios])
    drifts = [d for sc in scenarios for d in vc.compare(results[sc["id"]], sc["predicted"])]
    outcomes = Counter("refused" if "error" in results[sc["id"]] else results[sc["id"]]["mamba_cache_mode"]
                       for sc in scenarios)
    print(f"\nvllm {header['version']}: {len(scenarios)} scenarios, every field compared, {len(drifts)} drifts "
          f"({dict(outcomes)})")
    least, modes = RELEASES[version]
    assert header["version"] == version
    assert len(scenarios) >= least
    lines = [f"{d.scenario} {d.field}: engine {d.engine!r} != hybridplan {d.hybridplan!r}" for d in drifts]
    assert not lines, "\n".join(lines[:40])
    assert outcomes["align"] >= modes and outcomes["none"] >= modes and outcomes["refused"] >= 5
