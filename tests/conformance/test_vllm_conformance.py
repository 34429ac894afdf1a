"""hybridplan's model of each modelled vLLM release equals that release's own KV cache planning
(conformance/setup_vllm_oracle.sh unpacks the release beside the oracle venv's CPU torch) on every field of the
generated scenarios: >= 300 for each release here, every release whose planning, checks or parser differ from the
one before it (engine/vllm/behaviours.py). The patch releases 0.20.2, 0.22.1, 0.25.1 and 0.27.1 change no file the
model reads (behaviours.py says what they change) and run when HYBRIDPLAN_VLLM_PATCH_RELEASES is set."""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from oracle_setup import run_setup

from hybridplan.engine.vllm.engine import for_version as vllm_release
from hybridplan.conformance import vllm_conformance as vc
from hybridplan.engine.vllm.behaviours import RELEASES as MODELLED

pytestmark = pytest.mark.conformance
PATCHES = ("0.20.2", "0.22.1", "0.25.1", "0.27.1")
# release -> (scenarios at least, align and none outcomes at least)
RELEASES = {v: (300, 90) for v in MODELLED if v not in PATCHES or os.environ.get("HYBRIDPLAN_VLLM_PATCH_RELEASES")}


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

    with ThreadPoolExecutor(max_workers=min(len(oracles), 4)) as pool:
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
    release = MODELLED[version]
    if release.mamba_prefix_caching_archs:  # Mamba2 (Nemotron-H) in 'all' mode: a state page for every block, by
        # default before 0.28.0, on request (half the prefix-caching launches) until 0.31.0
        assert outcomes["all"] >= (30 if release.all_mode_default else 15)
    else:
        assert outcomes["all"] == 0
    if not release.kda_fused_conv_state:  # Kimi-Linear's older KDA state layout is refused (behaviours.V0_20_0)
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
    for change in MODELLED[version].changes:  # every change the release's record cites, in that release's files
        for rule in change.rule.split(", "):
            path, _, name = rule.partition("::")
            assert _defines(root / path, name), (version, rule)


def _defines(path: Path, dotted: str) -> bool:
    """Whether the module at `path` defines `dotted` (Class.method, function, or a module-level name)."""
    import ast

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


@pytest.fixture(scope="module")
def own_parsers(oracle_python):
    """{version: the flag records of the release's own `vllm serve` parser} (scripts/gen_vllm_flag_registry.py
    --one in each release's oracle, four at a time)."""
    import json
    import subprocess

    venv = Path(oracle_python).absolute().parent.parent
    script = Path(__file__).resolve().parents[2] / "scripts" / "gen_vllm_flag_registry.py"

    def dump(version):
        python, pythonpath = run_setup("setup_vllm_oracle.sh", str(venv), version,
                                       failure="the vLLM oracle could not be set up").split()
        out = subprocess.run([python, str(script), "--one"], env={"PYTHONPATH": pythonpath, "PATH": "/usr/bin:/bin"},
                             capture_output=True, text=True, timeout=600, check=True).stdout
        return json.loads(out)["flags"]

    with ThreadPoolExecutor(max_workers=min(len(RELEASES), 4)) as pool:
        return dict(zip(sorted(RELEASES), pool.map(dump, sorted(RELEASES))))


@pytest.mark.parametrize("version", sorted(RELEASES))
def test_each_release_parses_with_its_own_parser(own_parsers, version):
    """The registry hybridplan rewinds for the release (engine/vllm/flags.json through flag_history.json) is the
    release's own `vllm serve` parser, flag by flag (every parsing field, the hidden and negating option strings
    included; help text aside)."""
    from hybridplan.engine.vllm.command import recorded, registry

    own = {(f["dest"], tuple(f["options"])): f for f in recorded({"flags": own_parsers[version]})["flags"]}
    ours = {(f.dest, f.options): f for f in registry(version).flags}
    assert own.keys() == ours.keys()
    for key, f in own.items():
        mine = ours[key]
        assert (f["kind"], f["nargs"], f["type"], f["default"], f["const"], f["required"], f["deprecated"]) == (
            mine.kind, mine.nargs, mine.type, mine.default, mine.const, mine.required, mine.deprecated), key
        assert (tuple(f["choices"]) if f["choices"] is not None else None) == mine.choices, key
        assert (tuple(f.get("aliases", ())), frozenset(f.get("negatives", ()))) == (mine.aliases, mine.negatives), key
