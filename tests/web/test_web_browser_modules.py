"""The page's script as native ES modules, no bundler: no static file over 600 lines."""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "src" / "hybridplan" / "web" / "static"
MAX_LINES = 600


def test_no_static_file_is_over_600_lines():
    files = [p for p in STATIC.rglob("*") if p.is_file()]
    assert len([p for p in files if p.suffix == ".js"]) >= 20  # app.js is split: the entry, its panels and helpers
    lines = {p.relative_to(STATIC).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in files}
    assert {name: n for name, n in lines.items() if n > MAX_LINES} == {}
