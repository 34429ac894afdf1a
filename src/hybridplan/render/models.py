"""`models` as text: one catalog id a line, sorted."""

from __future__ import annotations

import sys


def print_models(rows: list[dict[str, str]]) -> None:
    """The ids of the `models --json` rows, sorted."""
    for row in sorted(rows, key=lambda r: r["id"]):
        sys.stdout.write(f"{row['id']}\n")
