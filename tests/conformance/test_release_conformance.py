"""hybridplan's model of releases 0.5.18 through 0.5.22 equals each release's own code (unpacked beside the oracle venv
by conformance/setup_releases.sh) on the release-difference scenarios and a sample of generated ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from oracle_setup import run_setup

from hybridplan.conformance.runner import check_release
from hybridplan.conformance.scenarios import RELEASE_CASES

pytestmark = pytest.mark.conformance
VERSIONS = ("0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22")
N = 24  # sampled scenarios per release beside its release cases: each batch stays near 10 s on 2 cores


@pytest.fixture(scope="module")
def releases(oracle_python):
    """The oracle interpreter, with 0.5.18-0.5.22 unpacked beside it."""
    venv = Path(oracle_python).absolute().parent.parent
    run_setup("setup_releases.sh", str(venv), *VERSIONS, failure="the releases could not be unpacked")
    return oracle_python


@pytest.mark.parametrize("version", VERSIONS)
def test_every_field_equals_the_release(releases, version):
    report = check_release(releases, version, n=N, seed=0)
    release_cases = sum(1 for sc in report.scenarios if "release" in sc.tags)
    print(f"\nsglang {report.engine['version']}: {len(report.scenarios)} scenarios ({release_cases} release cases, "
          f"{len(report.scenarios) - release_cases} sampled), every one compared")
    assert report.engine["version"] == version
    assert release_cases == len(RELEASE_CASES)
    lines = [f"{d.scenario} {d.field}: engine {d.engine!r} != hybridplan {d.hybridplan!r} ({d.rule})"
             for d in report.drifts]
    assert not lines, "\n".join(lines[:40])
    outcomes = report.counts["outcome"]
    assert outcomes["refused:parse:SystemExit"] >= 1  # a flag the release lacks or removed
    assert sum(v for k, v in outcomes.items() if k.startswith("branch:")) >= 20  # most reach the sizing branches
