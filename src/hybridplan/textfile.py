"""Reading a user's text file safely: regular files only, bounded size, strict UTF-8, one-line errors."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from hybridplan.errors import BadInput

_ABSENT = (errno.ENOENT, errno.ENOTDIR)


def lookup(path: str | Path, *, error: type[BadInput] = BadInput) -> os.stat_result | None:
    """The path's stat, None when nothing is there; a path the OS cannot look up (too long, a loop) is an error."""
    try:
        return os.stat(path)
    except OSError as exc:
        if exc.errno in _ABSENT:
            return None
        reason = "path too long" if exc.errno == errno.ENAMETOOLONG else (exc.strerror or str(exc))
        raise error(f"{str(path)[:200]}: cannot read: {reason}") from None
    except ValueError:  # an embedded NUL byte
        raise error(f"{str(path)[:200]!r}: not a valid path") from None


def read_text(path: str | Path, *, limit: int, error: type[BadInput] = BadInput) -> str:
    """The file's text: `read_bytes`, then bytes that are not UTF-8 are refused."""
    data = read_bytes(path, limit=limit, error=error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (invalid byte at offset {exc.start})") from None


def read_bytes(path: str | Path, *, limit: int, error: type[BadInput] = BadInput) -> bytes:
    """The file's bytes. Refuses what `open_regular` refuses and files over `limit` bytes."""
    with open_regular(path, error=error) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise error(f"{path}: {size:,} bytes, over the {limit:,}-byte bound for this file")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise error(f"{path}: over the {limit:,}-byte bound for this file")
    return data


def open_regular(path: str | Path, *, error: type[BadInput] = BadInput) -> BinaryIO:
    """The file opened for binary reading. Refuses devices, FIFOs and directories: stat before open, opened
    non-blocking (so a FIFO swapped in between never blocks), then checked again on the open descriptor."""
    st = lookup(path, error=error)
    if st is None:
        raise error(f"{path}: no such file")
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{path}: not a regular file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    fh = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between stat and open
        fh.close()
        raise error(f"{path}: not a regular file")
    return fh
