"""hybridplan's model of each modelled vLLM release equals that release's own KV cache planning
(conformance/setup_vllm_oracle.sh unpacks the release beside the oracle venv's CPU torch) on every field of the
generated scenarios: >= 300 for each supported release (0.33.0; 0.24.0, which most public boot logs use; 0.20.1 and
0.20.0, the older public boots')."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from oracle_setup import run_setup

from hybridplan.engine.vllm.engine import for_version as vllm_release
from hybridplan.conformance import vllm_conformance as vc

pytestmark = pytest.mark.conformance
# release -> (scenarios at least, align and none outcomes at least)
RELEASES = {"0.33.0": (300, 100), "0.24.0": (300, 100), "0.20.1": (300, 100), "0.20.0": (300, 100)}


@pytest.fixture(scope="module")
def vllm_answers(oracle_python):
    """{version: (scenarios, header, results)}: every release's oracle (built or reused beside the oracle venv) run at
    once, each a process of its own, so the file takes about as long as its slowest release."""
    venv = Path(oracle_python).absolute().parent.parent
    oracles = {v: run_setup("setup_vllm_oracle.sh", str(venv), v, failure="the vLLM oracle could not be set up").split()
               for v in sorted(RELEASES)}
    grids = {v: vc.scenarios(v) for v in oracles}

    def answer(version):
        python, path = oracles[version]
        return grids[version], *vc.run_oracle(python, path, [sc["payload"] for sc in grids[version]])

    with ThreadPoolExecutor(max_workers=len(oracles)) as pool:
        return dict(zip(oracles, pool.map(answer, oracles)))


@pytest.mark.parametrize("version", sorted(RELEASES))
def test_every_field_equals_vllm(vllm_answers, version):
    scenarios, header, results = vllm_answers[version]
    drifts = [d for sc in scenarios for d in vc.compare(results[sc["id"]], sc["predicted"])]
    outcomes = Counter("refused" if "error" in results[sc["id"]] else results[sc["id"]]["mamba_cache_mode"]
                       for sc in scenarios)
    families = Counter(sc["family"] for sc in scenarios)
    print(f"\nvllm {header['version']}: {len(scenarios)} scenarios {dict(families)}, every field compared, "
          f"{len(drifts)} drifts ({dict(outcomes)})")
    least, modes = RELEASES[version]
    assert header["version"] == version
    assert len(scenarios) >= least
    lines = [f"{d.scenario} {d.field}: engine {d.engine!r} != hybridplan {d.hybridplan!r}" for d in drifts]
    assert not lines, "\n".join(lines[:40])
    assert outcomes["align"] >= modes and outcomes["none"] >= modes and outcomes["refused"] >= 5
    if version != "0.33.0":  # Mamba2 (Nemotron-H) under prefix caching: a state page for every block
        assert outcomes["all"] >= 30
    if version.startswith("0.20."):  # Kimi-Linear's 0.20.x KDA state layout is refused (behaviours.V0_20_1)
        assert families["kda"] == 0
    else:
        assert families["kda"] >= 100  # Kimi-Linear: KDA state + MLA attention on the card's MLA backend


@pytest.mark.parametrize("version", sorted(RELEASES))
def test_every_cited_rule_is_in_that_release(oracle_python, version):
    """The file::function each planned quantity cites (explain's provenance, logs check's rules) exists in that
    release's own source: 0.24.0 and 0.20.x keep the planning in kv_cache_utils.py, 0.20.x logs the capacity from
    _report_kv_cache_config."""

    venv = Path(oracle_python).absolute().parent.parent
    _, pythonpath = run_setup("setup_vllm_oracle.sh", str(venv), version,
                              failure="the vLLM oracle could not be set up").split()
    root = Path(pythonpath.split(":")[0]) / "vllm"
    for quantity, rule in vllm_release(version).provenance().items():
        path, _, name = rule.split(" ")[0].partition("::")
        function = name.split(".")[-1].split("/")[0]
        assert f"def {function}(" in (root / path).read_text(), (quantity, rule)
