"""Printing lives in one place: hybridplan.render holds every text printer, and nothing else in the package calls
`print(` or builds a rich `Console` (that the --json path never imports them: tests/test_import_graph.py)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "hybridplan"
RENDER = SRC / "render"


def _printing(path: Path) -> list[str]:
    """`file:line what` for each print() call and each use of the name Console (import, call, annotation)."""
    hits = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            hits.append((node.lineno, "print("))
        elif isinstance(node, ast.Name) and node.id == "Console":
            hits.append((node.lineno, "Console"))
        elif isinstance(node, ast.alias) and node.name.rsplit(".", 1)[-1] == "Console":
            hits.append((getattr(node, "lineno", 0), "import Console"))
    rel = path.relative_to(SRC.parent)
    return [f"{rel}:{line} {what}" for line, what in hits]


def test_only_render_prints():
    outside = [hit for path in sorted(SRC.rglob("*.py")) if RENDER not in path.parents for hit in _printing(path)]
    assert outside == []


def test_the_scan_sees_printing():
    """The scan is not blind: the render modules do print, through a Console and print()."""
    hits = [hit for path in sorted(RENDER.glob("*.py")) for hit in _printing(path)]
    assert any("render/explain.py" in h and "Console" in h for h in hits)
    assert any("render/cookbook.py" in h and h.endswith("print(") for h in hits)


def test_text_path_prints_through_render(cli):
    code, out, _ = cli("ratio", "-L", "8192", "-C", "8", "--", "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.8-27B")
    assert code == 0
    assert "--mamba-full-memory-ratio" in out and "S  state slots / request" in out
