"""Split a boot log into logical records: one per logged message, with its rank tag, wrapped lines re-joined.

The prefix is the one `utils/common.py::configure_logger` writes, `[%(asctime)s{.msecs}{prefix}]`, where the
scheduler's prefix (`managers/scheduler.py`, the logger setup of each scheduler process) is any of
` DP{n} PP{n} ATTN_CP{n} MOE_DP{n} TP{n} EP{n}`; old releases wrote `[TP0]` without a time stamp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_RANK_TOKEN = r"(?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\d+"
# optional `service-1  | ` of docker compose, then the engine prefix
_PREFIX = re.compile(
    r"^(?:[\w.-]+\s+\|\s?)?\[(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?)?"
    rf"(?P<ranks>(?:\s*{_RANK_TOKEN})*)\s*\]\s?(?P<msg>.*)$"
)
# unprefixed lines that start a record of their own rather than continue the previous one
_STANDALONE = re.compile(
    r"^(?:Traceback \(most recent call last\)|\s+File \"|[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)\b"
    r"|(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\b|Killed\b|\[rank\d+\]|.*\d+%\|)"
)
_MIN_HARD_WRAP = 60  # a terminal narrower than this is not a hard wrap we try to undo
_HARD_WRAP_SHARE = 0.6  # share of wrapped lines that must end at the same column


@dataclass(frozen=True, kw_only=True)
class Record:
    """One logged message: rank tag ('' when none), time stamp, text with wrapped lines joined, first line number."""

    rank: str
    time: str | None
    text: str
    line: int


def _prefix(line: str) -> re.Match | None:
    m = _PREFIX.match(line)
    if m is None or (m.group("ts") is None and not m.group("ranks").strip()):
        return None
    return m


def _hard_wrap_width(lines: list[str], vocabulary: frozenset[str]) -> int | None:
    """The column a terminal hard-wrapped the log at, when the log says so unmistakably: no line is longer, most
    lines a continuation follows end exactly there, and one of those breaks cut a token in two or three different
    messages broke there.

    A word-wrapped (soft) log breaks only at spaces, at lengths that vary with the words (identical lines of
    several ranks break alike, hence 'different messages').
    """
    breaks: dict[int, list[int]] = {}
    for i, line in enumerate(lines[:-1]):
        nxt = lines[i + 1]
        if nxt.strip() and _prefix(nxt) is None and not _STANDALONE.match(nxt):
            breaks.setdefault(len(line), []).append(i)
    if not breaks:
        return None
    width = max(breaks, key=lambda n: len(breaks[n]))
    at = breaks[width]
    if (width < _MIN_HARD_WRAP or len(at) < 2 or len(at) < _HARD_WRAP_SHARE * sum(map(len, breaks.values()))
            or any(len(line) > width for line in lines)):
        return None
    cut = any(_joiner(lines[i], lines[i + 1], None, vocabulary) == "" for i in at)
    distinct = {(m.group("msg") if (m := _prefix(lines[i])) else lines[i]) for i in at}
    return width if cut or len(distinct) >= 3 else None


_WORD_END = re.compile(r"\w*$")
_WORD_START = re.compile(r"\w*")
_NUMBER = re.compile(r"\d+\.?\d*|\.\d+")


def _joiner(prev: str, nxt: str, wrap: int | None, vocabulary: frozenset[str]) -> str:
    """How to re-join a wrapped line: '' where the break cut a token, ' ' where a space was replaced.

    A detected terminal width decides alone. Otherwise a word-wrap only breaks where a space was, so a break next to
    `=`, inside a number, before `,` or inside a word the engine prints (e.g. `context_len`) was a hard cut.
    """
    if wrap is not None:
        return "" if len(prev) == wrap else " "
    if not prev or not nxt or prev[-1].isspace() or nxt[0].isspace():
        return " "
    if prev[-1] in "=([/" or nxt[0] in ",:;)]=" or (prev[-1] == "." and nxt[0].isdigit()):
        return ""
    a, b = _WORD_END.search(prev).group(), _WORD_START.match(nxt).group()
    if not a or not b:
        return " "
    if a[-1].isdigit() and (b[0].isdigit() or b[0] == "."):
        return ""
    glued = a + b
    return "" if glued in vocabulary and not (a in vocabulary and b in vocabulary) else " "


def split_records(text: str, vocabulary: frozenset[str] = frozenset()) -> list[Record]:
    """The log's records in order. Unprefixed lines continue the previous record (a wrapped message) unless they
    start something of their own (a traceback, an exception line, `Killed`); those inherit the last rank seen.
    `vocabulary` holds the words the caller looks for, so a line cut inside one of them is re-joined without a space.
    """
    lines = [_ANSI.sub("", raw).rstrip("\r\n") for raw in text.splitlines()]
    wrap = _hard_wrap_width(lines, vocabulary)
    records: list[dict] = []
    rank = ""
    for no, line in enumerate(lines, start=1):
        m = _prefix(line)
        if m is not None:
            rank = " ".join(m.group("ranks").split())
            records.append({"rank": rank, "time": m.group("ts"), "parts": [m.group("msg")], "line": no})
        elif not line.strip():
            records.append(None)  # a blank line ends the record before it
        elif records and records[-1] is not None and not _STANDALONE.match(line):
            records[-1]["parts"].append(_joiner(lines[no - 2], line, wrap, vocabulary) + line)
        else:
            records.append({"rank": rank, "time": None, "parts": [line], "line": no})
    out = []
    for r in records:
        if r is None:
            continue
        body = " ".join("".join(r["parts"]).split())
        out.append(Record(rank=r["rank"], time=r["time"], text=body, line=r["line"]))
    return out


def rank_numbers(tag: str) -> tuple[int, ...]:
    """The numbers in a rank tag ('DP0 TP3' -> (0, 3))."""
    return tuple(int(n) for n in re.findall(r"\d+", tag))


def rank0_tag(tags: list[str]) -> str:
    """The tag of rank 0: every number in it is 0 ('' when no rank logged a tag)."""
    tagged = [t for t in tags if t]
    for t in tagged:
        if not any(rank_numbers(t)):
            return t
    return min(tagged, key=rank_numbers) if tagged else ""
