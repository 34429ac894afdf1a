"""hybridplan's model of each modelled vLLM release equals that release's own KV cache planning, as recorded
(conformance/recorded/vllm-<version>.json.gz, scripts/record_oracles.py) on every field of the generated scenarios:
>= 300 for each release. Where a release runs Nemotron-H's state in 'all' mode, or refuses Kimi-Linear, is its own
switch (engine/vllm/behaviours.py). The cited rules are read from each release's unpacked source."""

from __future__ import annotations

from pathlib import Path

import pytest
from oracle_setup import RECORDED, missing, oracle_venv

from hybridplan.conformance.oracle import oracle
from hybridplan.conformance.recorded import replay
from hybridplan.engine.vllm.behaviours import RELEASES as BEHAVIOURS
from hybridplan.engine.vllm.engine import for_version as vllm_release

VLLM = oracle("vllm")


@pytest.mark.parametrize("version", VLLM.releases)
def test_every_field_equals_vllm(version, tmp_path):
    report = replay(VLLM, version, RECORDED, tmp_path)
    families, outcomes = report.counts["family"], report.counts["outcome"]
    print(f"\nvllm {report.engine['version']}: {len(report.cases)} scenarios {dict(families)}, every field compared, "
          f"{len(report.drifts)} drifts ({dict(outcomes)})")
    assert report.engine["version"] == version
    assert len(report.cases) >= 300
    assert not report.drifts, "\n".join(report.drift_lines())
    assert outcomes["align"] >= 100 and outcomes["none"] >= 100 and outcomes["refused"] >= 5
    release = BEHAVIOURS[version]
    if release.mamba_cache_mode_flag and "NemotronHForCausalLM" in release.mamba_prefix_caching_archs:
        assert outcomes["all"] >= 30  # Mamba2 (Nemotron-H) under prefix caching: a state page for every block
    else:
        assert outcomes["all"] == 0
    if release.kda_fused_conv_state:
        assert families["kda"] >= 100  # Kimi-Linear: KDA state + MLA attention on the card's MLA backend
    else:
        assert families["kda"] == 0  # its KDA state layout is refused (behaviours.V0_20_1)


@pytest.mark.parametrize("version", VLLM.releases)
def test_every_cited_rule_is_in_that_release(version):
    """The file::function each planned quantity cites (explain's provenance, logs check's rules) exists in that
    release's own source (conformance/setup_vllm_oracle.sh unpacks it): 0.24.0 and 0.20.x keep the planning in
    kv_cache_utils.py, 0.20.x logs the capacity from _report_kv_cache_config."""
    root = oracle_venv() / "vllm" / version / "src" / "vllm"
    if not root.is_dir():
        missing(f"vLLM {version}'s source is not unpacked: conformance/setup_vllm_oracle.sh {oracle_venv()} {version} "
                "source")
    for quantity, rule in vllm_release(version).provenance().items():
        path, _, name = rule.split(" ")[0].partition("::")
        function = name.split(".")[-1].split("/")[0]
        assert f"def {function}(" in (Path(root) / path).read_text(), (quantity, rule)
