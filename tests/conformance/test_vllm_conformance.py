"""hybridplan's model of each modelled vLLM release (all of engine/vllm/behaviours.py, the patch releases included)
equals that release's own KV cache planning, as recorded (conformance/recorded/vllm-<version>.json.gz,
scripts/record_oracles.py) on every field of the generated scenarios: >= 300 for each release. Where a release runs
Nemotron-H's state in 'all' mode, or refuses Kimi-Linear, is its own switch (engine/vllm/behaviours.py). The cited
rules and each release's recorded changes are read from the release's unpacked source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from oracle_setup import RECORDED, missing, oracle_venv

from hybridplan.conformance.oracle import oracle
from hybridplan.conformance.recorded import replay
from hybridplan.engine.vllm.behaviours import RELEASES as MODELLED
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
    assert outcomes["align"] >= 90 and outcomes["none"] >= 90 and outcomes["refused"] >= 5
    release = MODELLED[version]
    if release.mamba_prefix_caching_archs:  # Mamba2 (Nemotron-H) in 'all' mode: a state page for every block, by
        # default before 0.28.0, on request (half the prefix-caching launches) until 0.31.0
        assert outcomes["all"] >= (30 if release.all_mode_default else 15)
    else:
        assert outcomes["all"] == 0
    if release.kda_fused_conv_state:
        assert families["kda"] >= 100  # Kimi-Linear: KDA state + MLA attention on the card's MLA backend
    else:
        assert families["kda"] == 0  # its older KDA state layout is refused (behaviours.V0_20_0)


@pytest.mark.parametrize("version", VLLM.releases)
def test_every_cited_rule_is_in_that_release(version):
    """The file::function each planned quantity cites (explain's provenance, logs check's rules), and every rule the
    release's record of its changes cites, exists in that release's own source (conformance/setup_vllm_oracle.sh
    unpacks it): 0.24.0 and 0.20.x keep the planning in kv_cache_utils.py, 0.20.x logs the capacity from
    _report_kv_cache_config."""
    root = oracle_venv() / "vllm" / version / "src" / "vllm"
    if not root.is_dir():
        missing(f"vLLM {version}'s source is not unpacked: conformance/setup_vllm_oracle.sh {oracle_venv()} {version} "
                "source")
    for quantity, rule in vllm_release(version).provenance().items():
        path, _, name = rule.split(" ")[0].partition("::")
        function = name.split(".")[-1].split("/")[0]
        assert f"def {function}(" in (root / path).read_text(), (quantity, rule)
    for change in MODELLED[version].changes:
        for rule in change.rule.split(", "):
            path, _, name = rule.partition("::")
            assert _defines(root / path, name), (version, rule)


def _defines(path: Path, dotted: str) -> bool:
    """Whether the module at `path` defines `dotted` (Class.method, function, or a module-level name)."""
    if not path.exists():
        return False
    body = ast.parse(path.read_text()).body
    for part in dotted.split("."):
        node = next((n for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == part), None)
        if node is None:
            return any(isinstance(n, (ast.Assign, ast.AnnAssign)) and any(
                getattr(t, "id", None) == part for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))
                for n in body)
        body = node.body
    return True
