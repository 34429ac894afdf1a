"""check-engine names the modelled release an engine behaves as (no engine needed: the driver output is faked with
hybridplan's own model of one release)."""

from __future__ import annotations

import copy

import pytest
from rich.console import Console

from hybridplan.conformance.sglang.check import EngineCheck
from hybridplan.conformance.sglang.fixtures import materialize
from hybridplan.conformance.sglang.match import match
from hybridplan.conformance.sglang.model_side import predict
from hybridplan.conformance.sglang.scenarios import release_scenarios
from hybridplan.render.check_engine import print_check_engine


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    return release_scenarios(materialize(tmp_path_factory.mktemp("models")))


def _driver(scenarios, version: str) -> dict:
    """What a driver running release `version` would print, if hybridplan's model of it is right."""
    return {sc.id: predict(sc, version) for sc in scenarios}


def test_a_reported_modelled_release_is_compared_with_its_own_rules_only(scenarios):
    found = match({"version": "0.5.19"}, scenarios, _driver(scenarios, "0.5.19"))
    assert (found.version, found.reported_release, found.drifts, found.drifts_by_version) == (
        "0.5.19", "0.5.19", [], {"0.5.19": 0})
    assert found.summary == "matches sglang 0.5.19"


def test_a_dev_build_is_compared_with_every_release_and_the_closest_named(scenarios):
    found = match({"version": "0.0.0.dev11582+g4df60434d"}, scenarios, _driver(scenarios, "0.5.21"))
    assert found.reported_release is None
    assert list(found.drifts_by_version) == ["0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23"]
    assert (found.version, found.drifts_by_version["0.5.21"]) == ("0.5.21", 0)
    assert found.drifts_by_version["0.5.18"] > 0 and found.drifts_by_version["0.5.23"] > 0
    assert found.summary == "matches sglang 0.5.21"


def test_a_drift_names_the_closest_release_and_its_first_drifted_rule(scenarios):
    results = copy.deepcopy(_driver(scenarios, "0.5.23"))
    sized = next(sc.id for sc in scenarios if "K" in results[sc.id].get("sizing", {}))
    results[sized]["sizing"]["K"] += 1
    found = match({"version": "0.5.23"}, scenarios, results)
    assert found.version == "0.5.23" and found.drifts_by_version["0.5.23"] == 1
    assert all(n > 1 for v, n in found.drifts_by_version.items() if v != "0.5.23")
    [d] = found.drifts
    k = results[sized]["sizing"]["K"]
    assert found.summary == (f"closest: 0.5.23; first drifted rule: {d.rule} ({sized} sizing.K: engine {k} "
                             f"hybridplan {k - 1})")
    assert d.rule.endswith("sizing.handle_max_mamba_cache")

    report = EngineCheck(engine={"version": "0.5.23", "python": "3.12"}, cases=[], drifts=found.drifts, match=found)
    assert report.as_dict()["match"]["summary"] == found.summary and report.as_dict()["match"]["exact"] is False
    console = Console(record=True, width=400)
    print_check_engine(report, console)
    assert found.summary in console.export_text()
