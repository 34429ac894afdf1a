"""`results diff`: the same points on two builds, field by field."""

from __future__ import annotations

from dataclasses import replace

from hybridplan.verify.diff import diff_runs
from hybridplan.verify.store import Store
from tests.verify.conftest import make_run

DEV = dict(version="0.0.0.dev11582+g4df60434d", commit="4df60434d")


def test_changed_fields_with_relative_change():
    a = [make_run(), make_run(flags=("--mem-fraction-static 0.88",), sweep="mem-fraction-static=0.88")]
    b = [make_run(**DEV, boot={"max_mamba_cache_size": 37, "kv_tokens": 197163, "max_running_requests": 1},
                  bench={"median_tpot_ms": 29.5, "accept_length": 3.21, "successful_requests": 4}),
         make_run(**DEV, flags=("--mem-fraction-static 0.95",))]
    a = [replace(r, id=i + 1) for i, r in enumerate(a)]
    b = [replace(r, id=i + 10) for i, r in enumerate(b)]
    d = diff_runs(a, b)
    assert d["unchanged"] == 0 and len(d["changed"]) == 1
    fields = {f["field"]: f for f in d["changed"][0]["fields"]}
    assert set(fields) == {"max_mamba_cache_size", "tpot_ms"}
    assert fields["max_mamba_cache_size"]["a"] == 35 and fields["max_mamba_cache_size"]["b"] == 37
    assert fields["tpot_ms"]["change_pct"] == round((29.5 - 31.02) / 31.02 * 100, 2)
    assert [u["sweep"] for u in d["only_a"]] == ["mem-fraction-static=0.88"] and len(d["only_b"]) == 1


def test_cli_diff_and_show(tmp_path, cli, cli_json):
    db = tmp_path / "r.sqlite"
    with Store(db) as store:
        store.record(make_run())
        store.record(make_run(**DEV, outcome="boot-failure", failure={"phase": "state_pool", "message": "m"}, bench={}))
    code, out = cli_json("results", "diff", "0.5.23", "4df6", "--db", str(db), "--json")
    assert code == 0
    fields = {f["field"]: (f["a"], f["b"]) for f in out["changed"][0]["fields"]}
    assert fields["outcome"] == ("serves", "boot-failure") and fields["failure_phase"] == (None, "state_pool")
    code, _, err = cli("results", "diff", "0.5.23", "0.5.99", "--db", str(db))
    assert code == 2 and "recorded builds: 0.0.0.dev11582+g4df60434d 4df60434d, 0.5.23 1cf2b8c54" in err
    code, out = cli_json("results", "show", "--db", str(db), "--json", "--build", "0.5.23")
    assert code == 0 and [r["outcome"] for r in out["runs"]] == ["serves"] and "log" not in out["runs"][0]
    code, _, err = cli("results", "show", "--db", str(tmp_path / "none.sqlite"))
    assert code == 2 and "no results database" in err
    code, text, _ = cli("results", "show", "--db", str(db))
    assert code == 0 and "2 runs" in text
