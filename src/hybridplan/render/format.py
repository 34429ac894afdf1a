"""Number formatting the text printers share."""

from __future__ import annotations


def cell(v: object) -> str:
    """A table cell: "-" for none, floats to 4 places (large ones whole), ints with separators."""
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4f}".rstrip("0").rstrip(".") if abs(v) < 1e6 else f"{v:,.0f}"
    return f"{v:,}" if isinstance(v, int) else str(v)
