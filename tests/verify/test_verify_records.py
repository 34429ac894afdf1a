"""split_records: which lines continue the record before them. A continuation joins only an open record: none at
the start of the log, none right after a blank line (mypy found the old dict-or-None list indexed without proof)."""

from hybridplan.engine.sglang.log_records import Record, split_records

LOG = """\
[2025-06-01 10:00:00 TP0] Load weight end. avail mem=60.12
 GB, mem usage=15.3 GB.

continued after blank
[2025-06-01 10:00:01 TP1] KV Cache is allocated.
Traceback (most recent call last):
  File "x.py", line 1
"""


def test_a_wrapped_line_joins_the_open_record_and_a_blank_line_closes_it():
    assert split_records(LOG) == [
        Record(rank="TP0", time="2025-06-01 10:00:00", text="Load weight end. avail mem=60.12 GB, mem usage=15.3 GB.",
               line=1),
        Record(rank="TP0", time=None, text="continued after blank", line=4),  # after the blank: a record of its own
        Record(rank="TP1", time="2025-06-01 10:00:01", text="KV Cache is allocated.", line=5),
        Record(rank="TP1", time=None, text="Traceback (most recent call last):", line=6),
        Record(rank="TP1", time=None, text='File "x.py", line 1', line=7),
    ]


def test_unprefixed_lines_before_any_record_start_their_own():
    got = split_records("\nexcerpt without prefixes\n  indented next line\n")
    assert got == [Record(rank="", time=None, text="excerpt without prefixes indented next line", line=2)]
