"""The results store: keys, atomic records, filters by build, and refusing what is not a results database."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hybridplan.errors import BadInput
from hybridplan.verify.store import SCHEMA_VERSION, RunKey, Store
from tests.verify.conftest import make_run


def test_record_and_read_back(tmp_path):
    run = make_run(failure=None)
    with Store(tmp_path / "r.sqlite") as store:
        assert not store.has(run.key)
        run_id = store.record(run)
        assert store.has(run.key)
        (back,) = store.runs()
    assert back.id == run_id and back.key == run.key
    assert (back.boot, back.bench, back.log, back.outcome) == (run.boot, run.bench, run.log, "serves")


def test_same_key_replaces_and_builds_filter(tmp_path):
    with Store(tmp_path / "r.sqlite") as store:
        store.record(make_run(outcome="boot-failure", failure={"phase": "cuda_graph", "message": "m"}))
        store.record(make_run())  # a rerun of the same point replaces it
        store.record(make_run(version="0.0.0.dev11582+g4df60434d", commit="4df60434d"))
        assert len(store.runs()) == 2
        assert [r.outcome for r in store.runs(build="0.5.23")] == ["serves"]
        assert len(store.runs(build="4df6")) == 1 and len(store.runs(build="1cf2b8c54d")) == 0
        assert store.runs(gpu="h200") == [] and len(store.runs(page="qwen3.8-27b")) == 2
        assert store.builds() == [("0.0.0.dev11582+g4df60434d", "4df60434d"), ("0.5.23", "1cf2b8c54")]


@given(items=st.dictionaries(st.text(min_size=1, max_size=5), st.text(max_size=5), min_size=1, max_size=6))
def test_key_ignores_dict_order(items):
    a = RunKey(engine_version="v", engine_commit="", gpu="g", page="p", selection=dict(items), flags=(), env=(),
               workload={"isl": 1, "osl": 2})
    b = RunKey(engine_version="v", engine_commit="", gpu="g", page="p", selection=dict(reversed(list(items.items()))),
               flags=(), env=(), workload={"osl": 2, "isl": 1})
    assert a.digest == b.digest


def test_a_failed_replace_keeps_the_old_record(tmp_path):
    """Replacing a point deletes and inserts in one transaction: an insert that fails rolls the delete back."""
    from dataclasses import replace

    good = make_run()
    broken = replace(make_run(outcome="degraded"), command=None)  # violates NOT NULL inside record()
    with Store(tmp_path / "r.sqlite") as store:
        store.record(good)
        with pytest.raises(sqlite3.IntegrityError):
            store.record(broken)
        (kept,) = store.runs()
        assert kept.outcome == "serves" and kept.key == good.key
    with sqlite3.connect(tmp_path / "r.sqlite") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_refuses_other_files(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database at all, just text that is long enough to be read as a header" * 10)
    with pytest.raises(BadInput, match="not a results database"):
        Store(junk)
    newer = tmp_path / "newer.sqlite"
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    with pytest.raises(BadInput, match="results schema"):
        Store(newer)
