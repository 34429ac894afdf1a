"""`cookbook check` on real cards: a pin that cannot boot or serve is an error naming its phase and numbers, and a
measured record the model disagrees with is an error (the bundled page's records all agree)."""

from __future__ import annotations

from pathlib import Path

from hybridplan.cookbook.fit import check_records
from hybridplan.cookbook.pages import load_page

BUNDLED = Path(__file__).parents[2] / "src" / "hybridplan" / "data" / "cookbooks" / "qwen3.8-27b.yaml"


def _page(tmp_path: Path, old: str, new: str) -> str:
    text = BUNDLED.read_text()
    assert old in text
    path = tmp_path / "qwen3.8-27b.yaml"
    path.write_text(text.replace(old, new))
    return str(path)


def test_bundled_records_agree_with_the_model():
    page = load_page("qwen3.8-27b")
    assert len(page.records) == 9 and check_records(page) == []


def test_an_unbootable_rtx5090_pin_is_an_error_with_its_phase(tmp_path, cli_json):
    path = _page(tmp_path, "      - --mem-fraction-static 0.9\n", "      - --mem-fraction-static 0.99\n")
    code, out = cli_json("cookbook", "check", path, "--json")
    errors = [f for f in out["findings"] if f["severity"] == "error"]
    assert code == 1 and errors and all(f["rule"] == "pin-fit" for f in errors)
    msg = errors[0]["message"]
    # 0.99 of P leaves 0.31 GiB of slack on the 31.36 GiB card: capture cannot fit
    assert "fails capturing CUDA graphs (cuda_graph)" in msg and "the 0.31 GiB slack" in msg
    assert {f["selection"]["hw"] for f in errors} == {"rtx5090"}


def test_a_record_the_model_contradicts_is_an_error(tmp_path, cli_json):
    # the 0.895 DFLASH2 fp32 pin recorded as failing: the model says it serves, so check must say they disagree
    path = _page(tmp_path, "--mamba-full-memory-ratio 10\n    outcome: served",
                 "--mamba-full-memory-ratio 10\n    outcome: failed")
    code, out = cli_json("cookbook", "check", path, "--json")
    rec = [f for f in out["findings"] if f["rule"] == "record"]
    assert code == 1 and len(rec) == 1 and rec[0]["severity"] == "error"
    assert rec[0]["message"].startswith("record dflash-fp32-ht-pin on NVIDIA GeForce RTX 5090: measured failed")
    assert "the model predicts it serves" in rec[0]["message"]
