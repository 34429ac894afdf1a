"""Static checks CI enforces, configured in pyproject.toml: the import contracts (only hybridplan.engine reaches a
version package, the layers, no cycles), ruff, and mypy (strict on engine/, models/ and planner/)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp), "PYTHONDONTWRITEBYTECODE": "1"})


def test_import_contracts_are_kept(tmp_path):
    proc = _run("-c", "import sys; from importlinter.cli import lint_imports; "
                "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))", tmp=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Contracts: 3 kept, 0 broken." in proc.stdout


def test_ruff_is_clean(tmp_path):
    proc = _run("-m", "ruff", "check", "--no-cache", "src", "tests", "benchmarks", "conformance", tmp=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_is_clean(tmp_path):
    proc = _run("-m", "mypy", "--cache-dir", str(tmp_path / "mypy"), tmp=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout
