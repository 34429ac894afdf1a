"""A boot log's text bounded before any engine's parser reads it: the whole log and each of its lines, so every
parser's work is bounded by the text's size whatever it holds (each engine's patterns have bounded repeats only)."""

from __future__ import annotations

from hybridplan.errors import BadInput
from hybridplan.limits import MAX_LOG_BYTES

MAX_LINE_CHARS = 2 << 20  # no engine line is near this (sglang's server_args ~10 KiB); a longer one is not a boot log


def check_bounds(text: str, name: str = "log", max_chars: int = MAX_LOG_BYTES) -> None:
    """Refuse a log over the size bound or with a line over MAX_LINE_CHARS, before any parsing."""
    if len(text) > max_chars:
        raise BadInput(f"{name}: {len(text):,} characters, over the {max_chars:,}-character bound for a boot log")
    for no, line in enumerate(text.splitlines(), start=1):
        if len(line) > MAX_LINE_CHARS:
            raise BadInput(f"{name}: line {no} is {len(line):,} characters long, over the {MAX_LINE_CHARS:,}-character "
                           "bound for one log line")
