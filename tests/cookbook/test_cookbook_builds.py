"""A page without an engine_version is modelled by the release its build is, or the named build profile of a build that
is no release (data/sglang_builds.yaml, engine/sglang/behaviours.py PROFILES)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridplan.cookbook.builds import builds, find, page_version, parse
from hybridplan.cookbook.pages import read_page_text
from hybridplan.cookbook.render import render
from hybridplan.errors import BadInput

PAGE = (Path(__file__).parent / "seeded.yaml").read_text()
FULL = "1cf2b8c54d81802abc15dcf23a29b9cc687bc01e"
# 0.5.19 spells the ReplaySSM switch --enable-gdn-replayssm-spec; 0.5.20 renamed it (0.5.23 refuses the old name)
OLD_FLAG = PAGE.replace("          - --speculative-num-draft-tokens 4\n",
                        "          - --speculative-num-draft-tokens 4\n          - --enable-gdn-replayssm-spec\n", 1)
EAGLE_H200 = {"hw": "h200", "quant": "fp8", "spec": "eagle"}


def _page(text: str, commit: str | None, engine_version: str | None = None):
    text = text.replace(f"  commit: {FULL}\n", f"  commit: '{commit}'\n" if commit else "  note: no build\n")
    if engine_version:
        text += f"engine_version: '{engine_version}'\n"
    loaded = read_page_text(text, "seeded.yaml")
    assert loaded.page is not None, loaded.errors
    return loaded.page


def test_the_table_places_the_qwen38_build_between_two_releases():
    qwen = find("1cf2b8c")
    assert qwen is not None and qwen is find(FULL)
    assert (qwen.release, qwen.profile, qwen.after, qwen.before) == (None, "1cf2b8c", "0.5.17", "0.5.18")
    assert qwen.sources
    assert find("71de97b2").release == "0.5.18" and find("12771786").release == "0.5.19"
    assert find("abcdef1") is None and find("main") is None
    assert len({b.commit for b in builds()}) == len(builds())


@pytest.mark.parametrize("build, version, says", [
    ("71de97b2", "0.5.18", "build 71de97b2 is sglang 0.5.18 (sglang_builds.yaml): modelled by its rules"),
    ("v0.5.20", "0.5.20", "build v0.5.20 is sglang 0.5.20: modelled by its rules"),
    ("1cf2b8c", "1cf2b8c", "build 1cf2b8c is a dev build between 0.5.17 and 0.5.18, not a release "
                           "(sglang_builds.yaml): modelled as build profile 1cf2b8c, sglang 0.5.18's rules with "
                           "dspark_markov_rank_in_dflash_config=True"),
    ("abcdef1", "0.5.23", "build abcdef1: not in sglang_builds.yaml; modelled as 0.5.23"),
    ("0.5.17", "0.5.23", "predates the modelled range"),
    (None, "0.5.23", "the page names no build and no engine_version: modelled as 0.5.23"),
])
def test_a_build_maps_to_the_release_that_models_it(build, version, says):
    got, note = page_version(build)
    assert got == version and says in note


GOOD = {"commit": "abcdef1", "release": None, "profile": None, "after": None, "before": None, "sources": ["s"],
        "note": ""}


@pytest.mark.parametrize("entry, field", [
    ({**GOOD, "commit": "XYZ"}, r"builds\[0\]\.commit"),
    ({**GOOD, "release": "0.5.17"}, r"builds\[0\]\.release"),
    ({**GOOD, "sources": []}, r"builds\[0\]\.sources"),
    ({**GOOD, "profile": "9.9.9"}, r"builds\[0\]\.profile"),
    ({**GOOD, "release": "0.5.18", "profile": "1cf2b8c"}, r"builds\[0\]\.profile"),
    ({"commit": "abcdef1", "release": None}, r"builds\[0\]: expected exactly"),
])
def test_a_malformed_table_entry_names_its_field(entry, field):
    assert parse({"builds": [GOOD]})[0].commit == "abcdef1"
    with pytest.raises(BadInput, match=field):
        parse({"builds": [entry]})


def test_the_page_calculator_uses_the_release_of_its_build():
    page = _page(OLD_FLAG, "12771786")
    assert page.engine_version == "0.5.19" and "sglang 0.5.19" in page.engine_version_note
    r = render(page, EAGLE_H200)
    assert r.engine_version == "0.5.19" and "--enable-gdn-replayssm-spec" in r.command
    assert not [w for w in r.warnings if "rejects this command" in w]
    assert page.engine_version_note in r.notes
    # the same page on a 0.5.23 build: the engine model refuses the flag 0.5.20 renamed
    r = render(_page(OLD_FLAG, "v0.5.23"), EAGLE_H200)
    assert r.engine_version == "0.5.23"
    assert any("sglang 0.5.23) rejects this command" in w and "--enable-gdn-replayssm-spec" in w for w in r.warnings)


def test_an_explicit_engine_version_wins_over_the_build():
    page = _page(PAGE, "71de97b2", engine_version="0.5.21")
    assert (page.engine_version, page.engine_version_note) == ("0.5.21", "")
    assert render(page, EAGLE_H200).engine_version == "0.5.21"


def test_a_dev_build_page_is_modelled_by_its_profile_and_says_so():
    page = _page(PAGE, FULL)
    assert page.engine_version == "1cf2b8c"  # not silently the newest release
    assert "dev build between 0.5.17 and 0.5.18, not a release" in page.engine_version_note
    r = render(page, EAGLE_H200)
    assert r.engine_version == "1cf2b8c" and page.engine_version_note in r.notes


def test_a_dev_build_without_a_profile_says_the_newest_release_is_an_assumption(monkeypatch):
    import hybridplan.cookbook.builds as b

    table = parse({"builds": [{**GOOD, "after": "0.5.20", "before": "0.5.21"}]})
    monkeypatch.setattr(b, "builds", lambda: table)
    version, note = page_version("abcdef1")
    assert version == "0.5.23" and "between 0.5.20 and 0.5.21" in note and "which it may not be" in note
