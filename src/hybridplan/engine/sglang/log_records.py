"""Split a boot log into logical records: one per logged message, with its rank tag, wrapped lines re-joined.

The prefix is the one `utils/common.py::configure_logger` writes, `[%(asctime)s{.msecs}{prefix}]`, where the
scheduler's prefix (`managers/scheduler.py`, the logger setup of each scheduler process) is any of
` DP{n} PP{n} ATTN_CP{n} MOE_DP{n} TP{n} EP{n}`; old releases wrote `[TP0]` without a time stamp.

Logs arrive as people paste them: cut at a terminal's width (inside words and numbers), word-wrapped by an editor or
an issue tracker, several messages run together on one line, or as an excerpt without prefixes. Every pattern has
bounded repeats only and every step is linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b\[[0-9;]{0,16}[A-Za-z]")
_RANK_TOKEN = r"(?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\d{1,5}"
_TIME = r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?"
# optional `service-1  | ` of docker compose, then the engine prefix
_PREFIX = re.compile(
    rf"(?:[\w.-]{{1,64}}\s{{1,8}}\|\s?)?\[(?P<ts>{_TIME})?(?P<ranks>(?: {{0,4}}{_RANK_TOKEN}){{0,8}}) {{0,4}}\] ?"
)
# a message run onto the previous one's line (a comment box that joined the lines): split before its prefix
_EMBEDDED = re.compile(rf" (?=\[{_TIME}[ \]])")
# unprefixed lines that start a record of their own; the first three are unmistakable, the rest only look so
_STRONG = re.compile(r"Traceback \(most recent call last\)|\s{1,16}File \"|[A-Za-z_][\w.]{0,127}(?:Error|Exception)\b:"
                     r"|Killed\s{0,8}$")
_WEAK = re.compile(r"[A-Za-z_][\w.]{0,127}(?:Error|Exception|Interrupt|Exit)\b|(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\b"
                   r"|Killed\b|\[rank\d{1,5}\]")
_PROGRESS = re.compile(r"\d{1,3}%(?: Completed )?\|")  # a progress bar (tqdm), anywhere on the line
_MIN_HARD_WRAP = 30  # a terminal narrower than this is not a hard wrap we try to undo
_HARD_WRAP_SHARE = 0.6  # share of wrapped lines that must end at the same column
_WORD_END = re.compile(r"[\w#]{1,64}\Z")
_WORD_START = re.compile(r"[\w#]{1,64}")
_TOKEN_END = re.compile(r"[^\s]{1,160}\Z")
_TOKEN_START = re.compile(r"[^\s]{1,160}")
_SENTENCE_END = re.compile(r"(?<![\w.])[a-z]{1,32}[.:]\Z")


@dataclass(frozen=True, kw_only=True)
class Record:
    """One logged message: rank tag ('' when none), time stamp, text with wrapped lines joined, first line number."""

    rank: str
    time: str | None
    text: str
    line: int


@dataclass(kw_only=True)
class _Draft:
    """A record while its wrapped lines are being joined."""

    rank: str
    time: str | None
    parts: list[str]
    line: int


def _prefix(line: str) -> re.Match[str] | None:
    m = _PREFIX.match(line)
    if m is None or (m.group("ts") is None and not m.group("ranks").strip()):
        return None
    return m


def _standalone(line: str, starts: tuple[str, ...]) -> bool:
    """An unprefixed line that begins a record: a traceback, an exception, `Killed`, a progress bar, or one of the
    engine messages the caller reads (an excerpt pasted without its prefixes)."""
    return bool(_STRONG.match(line) or _WEAK.match(line) or _PROGRESS.search(line)) or line.startswith(starts)


def _word_end(text: str) -> str:
    m = _WORD_END.search(text[-64:])
    return m.group() if m else ""


def _word_start(text: str) -> str:
    m = _WORD_START.match(text)
    return m.group() if m else ""


def _joiner(prev: str, nxt: str, vocabulary: frozenset[str]) -> str:
    """How to re-join a line break that was not there in the log: '' where it cut a token, ' ' where a space was.

    A word-wrap breaks only where a space was (or after a hyphen), so a break next to `=`, inside a number, before
    `,` or inside a word the engine prints (e.g. `context_len`) was a cut.
    """
    if not prev or not nxt or prev[-1].isspace() or nxt[0].isspace():
        return " "
    if prev[-1] in "=([{/-" or nxt[0] in ",.:;)]}=/" or (prev[-1] == "." and nxt[0].isdigit()):
        return ""
    if nxt[0] == "." and nxt[1:2].isalnum() and prev[-1].isalnum():
        return ""  # a dotted name (`torch.bfloat16`) cut before its dot
    if _glued_token(prev, nxt) in vocabulary and not (token(_TOKEN_END, prev[-160:]) in vocabulary
                                                      and token(_TOKEN_START, nxt) in vocabulary):
        return ""  # a token the caller knows (a flag, a URL) cut in two
    if prev[-1].isdigit() and (nxt[0].isdigit() or (nxt[0] == "." and nxt[1:2].isdigit())):
        return ""
    a, b = _word_end(prev), _word_start(nxt)
    if not a or not b:
        return " "
    return "" if a + b in vocabulary and not (a in vocabulary and b in vocabulary) else " "


def token(pattern: re.Pattern[str], text: str) -> str:
    """The whitespace-free token `pattern` finds, without the punctuation around it (`(https://…)`, `--flag.`)."""
    m = pattern.search(text)
    return m.group().strip("\"'(),.:;") if m else ""


def _glued_token(prev: str, nxt: str) -> str:
    """The whitespace-free token across a break, without the punctuation around it."""
    a, b = _TOKEN_END.search(prev[-160:]), _TOKEN_START.match(nxt)
    return ((a.group() if a else "") + (b.group() if b else "")).strip("\"'(),.:;")


def _cuts_word(prev: str, nxt: str, vocabulary: frozenset[str]) -> bool:
    """The break cuts a word of `vocabulary` in two (e.g. `torch.OutOf|MemoryError`)."""
    a, b = _word_end(prev), _word_start(nxt)
    return bool(a and b) and a + b in vocabulary and a not in vocabulary


def _hard_joiner(prev: str, nxt: str, vocabulary: frozenset[str]) -> str:
    """'' for a line that fills a hard wrap's width, except where it ends a sentence (`… cache.` then `Computed`):
    then the line was as long as the width by chance, and the next one is the log's own next line."""
    if _SENTENCE_END.search(prev[-40:]) and nxt[:1].isupper() and not _cuts_word(prev, nxt, vocabulary):
        return " "
    return ""


def _hard_wrap_width(lines: list[str], vocabulary: frozenset[str], starts: tuple[str, ...]) -> int | None:
    """The column a terminal hard-wrapped the log at, when the log says so unmistakably: no line is longer, most
    lines a continuation follows end exactly there, and the breaks there show a cut (a token or number cut in two,
    a space kept at the break), three different messages, or one message broken twice.

    A word-wrapped (soft) log breaks only at spaces, drops them, and its break columns vary with the words
    (identical lines of several ranks break alike, hence 'different messages').
    """
    breaks: dict[int, list[int]] = {}
    for i, line in enumerate(lines[:-1]):
        nxt = lines[i + 1]
        if nxt.strip() and _prefix(nxt) is None and not _standalone(nxt, starts):
            breaks.setdefault(len(line), []).append(i)
    if not breaks:
        return None
    width = max(breaks, key=lambda n: len(breaks[n]))
    at = breaks[width]
    if (width < _MIN_HARD_WRAP or len(at) < 2 or len(at) < _HARD_WRAP_SHARE * sum(map(len, breaks.values()))
            or any(len(line) > width for line in lines)):
        return None
    for i in at:
        prev, nxt = lines[i], lines[i + 1]
        if prev[-1].isspace() or nxt[0].isspace() or _joiner(prev, nxt, vocabulary) == "":
            return width
    if len(set(at) & {i + 1 for i in at}):
        return width  # one message broken twice at the same column
    distinct = {lines[i] if (m := _prefix(lines[i])) is None else lines[i][m.end():] for i in at}
    return width if len(distinct) >= 3 else None


def _physical_lines(text: str) -> list[str]:
    """The log's lines, ANSI colours removed, messages run together on one line split apart."""
    out: list[str] = []
    for raw in text.splitlines():
        line = _ANSI.sub("", raw) if "\x1b" in raw else raw
        if _EMBEDDED.search(line):
            out.extend(part for part in _EMBEDDED.split(line) if part)
        else:
            out.append(line)
    return out


def split_records(text: str, vocabulary: frozenset[str] = frozenset(),
                  starts: tuple[str, ...] = ()) -> list[Record]:
    """The log's records in order. Unprefixed lines continue the previous record (a wrapped message) unless they
    start something of their own (a traceback, an exception line, `Killed`, one of `starts`); those inherit the
    last rank seen. `vocabulary` holds the words the caller looks for, so a line cut inside one of them is re-joined
    without a space. In a hard-wrapped log a line that fills the width is always continued, unless the next line
    is a traceback or an exception (a cut inside a word of `vocabulary` still continues).
    """
    lines = _physical_lines(text)
    wrap = _hard_wrap_width(lines, vocabulary, starts)
    records: list[_Draft | None] = []  # None: a blank line, which ends the record before it
    rank = ""
    for no, line in enumerate(lines, start=1):
        m = _prefix(line)
        prev = lines[no - 2] if no > 1 else ""
        last = records[-1] if records else None  # the record a continuation line joins
        if m is not None:
            rank = " ".join(m.group("ranks").split())
            records.append(_Draft(rank=rank, time=m.group("ts"), parts=[line[m.end():]], line=no))
        elif last is not None and wrap is not None and len(prev) == wrap and (
                not _STRONG.match(line) or _cuts_word(prev, line, vocabulary)):
            last.parts.append(_hard_joiner(prev, line, vocabulary) + line)  # blanks too: a cut before a space
        elif not line.strip():
            records.append(None)
        elif last is not None and not _standalone(line, starts):
            last.parts.append(_joiner(prev, line, vocabulary) + line)
        else:
            records.append(_Draft(rank=rank, time=None, parts=[line], line=no))
    return [Record(rank=r.rank, time=r.time, text=" ".join("".join(r.parts).split()), line=r.line)
            for r in records if r is not None]


def rank_numbers(tag: str) -> tuple[int, ...]:
    """The numbers in a rank tag ('DP0 TP3' -> (0, 3))."""
    return tuple(int(n) for n in re.findall(r"\d{1,9}", tag))


def rank0_tag(tags: list[str]) -> str:
    """The tag of rank 0: every number in it is 0 ('' when no rank logged a tag)."""
    tagged = [t for t in tags if t]
    for t in tagged:
        if not any(rank_numbers(t)):
            return t
    return min(tagged, key=rank_numbers) if tagged else ""
