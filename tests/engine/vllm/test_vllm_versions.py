"""Which modelled vLLM release a version string a vLLM build prints is modelled by (engine/vllm/versions.py): the
newest modelled release not newer than it (PEP 440), with a note naming the build; never an error for a version."""

from __future__ import annotations

import pytest

from hybridplan.engine.vllm.engine import for_version as vllm_release
from hybridplan.engine.vllm.behaviours import RELEASES
from hybridplan.engine.vllm.versions import resolve
from hybridplan.errors import BadInput

MODELLED = tuple(RELEASES)


@pytest.mark.parametrize(("version", "release"), [
    ("0.20.2rc1.dev9+g01d4d1ad3", "0.20.1"),  # 9 commits past v0.20.2rc0: 0.20.1's code and more
    ("0.29.1rc1.dev339+g5f55db35e", "0.29.0"),
    ("0.31.0.dev12+gabc1234", "0.30.0"),  # X.Y.Z.devN sorts before X.Y.Z's release candidates
    ("0.30.0rc2", "0.29.0"),
    ("0.26.0.post1", "0.26.0"),
    ("0.21.5", "0.21.0"),  # no such release: the one before it
])
def test_a_build_is_modelled_by_the_release_it_branches_from(version, release):
    r = resolve(version, MODELLED)
    assert r.release == release
    assert r.note is not None and f"vLLM {version}" in r.note and f"modelled as {release}" in r.note
    assert "--engine-version" in r.note


def test_a_dev_build_note_counts_its_commits():
    note = resolve("0.29.1rc1.dev339+g5f55db35e", MODELLED).note
    assert note is not None and "a dev build, 339 commits past its last tag" in note


@pytest.mark.parametrize("version", ["0.33.0", "v0.24.0", "0.20.2", "0.34.0+cu129"])
def test_a_modelled_release_is_itself_without_a_note(version):
    r = resolve(version, MODELLED)
    assert r.release == version.removeprefix("v").split("+")[0] and r.note is None


def test_older_and_newer_releases_take_the_ends_of_the_range():
    old, new = resolve("0.16.1rc1.dev111+gafd089f23", MODELLED), resolve("0.35.0", MODELLED)
    assert old.release == "0.20.0" and "older than every modelled release (0.20.0-0.34.0)" in (old.note or "")
    assert new.release == "0.34.0" and "newer than every modelled release" in (new.note or "")


def test_the_engine_carries_the_note_into_the_resolved_launch():
    """for_engine resolves any version; the note joins the resolved arguments' notes (explain and plan show them)."""
    from hybridplan.models.loader import load_model

    engine = vllm_release("0.29.1rc1.dev339+g5f55db35e")
    assert engine.version == "0.29.0"
    cmd = engine.parse_command("vllm serve Qwen/Qwen3.5-27B --max-model-len 32768")
    args = engine.resolve(cmd, load_model("Qwen/Qwen3.5-27B"))
    assert args.notes[0].startswith("vLLM 0.29.1rc1.dev339+g5f55db35e is a dev build")
    assert vllm_release("0.33.0").note is None and vllm_release().version == "0.33.0"


def test_a_string_that_is_no_version_is_refused():
    with pytest.raises(BadInput, match="'nightly' is not a vLLM version"):
        vllm_release("nightly")


def test_logs_check_models_a_dev_build_by_its_release_and_says_so():
    """A boot log from a dev build (`LLM engine (v0.20.2rc1.dev9+g01d4d1ad3)`) is checked by 0.20.1's rules, with the
    note; a log from a modelled release has none."""
    from hybridplan.engine.vllm.serving.logcheck import check_vllm_log

    from tests.engine.vllm.test_vllm_releases import BOOT_0_20_0

    dev = BOOT_0_20_0.replace("(v0.20.0)", "(v0.20.2rc1.dev9+g01d4d1ad3)")
    d = check_vllm_log(dev, None, gpu="rtx5090")
    assert d["log_release"] == "0.20.2rc1.dev9+g01d4d1ad3" and d["modelled_release"] == "0.20.1"
    assert d["release_note"].startswith("vLLM 0.20.2rc1.dev9+g01d4d1ad3 is a dev build, 9 commits past its last tag")
    assert "release_note" not in check_vllm_log(BOOT_0_20_0, None, gpu="rtx5090")
