"""A launch command's flags as the engine's parser groups them, edited in place: `plan` changes the flags it must and
keeps every other token the user typed, in order."""

from __future__ import annotations

from hybridplan.engine.registry import FlagRegistry


def _spans(argv: tuple[str, ...], reg: FlagRegistry) -> list[tuple[int, int, str | None]]:
    """(start, end, dest) of each flag with its values (dest None: a token the registry does not know)."""
    out: list[tuple[int, int, str | None]] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        name, eq, _ = tok.partition("=")
        f = reg.by_option.get(name) if tok.startswith("--") else None
        end = i + 1
        if f is not None and f.takes_value and not eq:
            if f.nargs in ("+", "*"):
                while end < len(argv) and not argv[end].startswith("--"):
                    end += 1
            else:
                end += f.nargs if isinstance(f.nargs, int) else 1
        out.append((i, min(end, len(argv)), f.dest if f is not None else None))
        i = end
    return out


def value_of(argv: tuple[str, ...], dest: str, reg: FlagRegistry) -> str | None:
    """The text of the last occurrence of a flag (argparse: last wins); "" for a switch; None when absent."""
    found = None
    for s, e, d in _spans(argv, reg):
        if d == dest:
            tok = argv[s]
            found = tok.partition("=")[2] if "=" in tok else " ".join(argv[s + 1:e])
    return found


def with_flag(argv: tuple[str, ...], option: str, value: str | None, reg: FlagRegistry) -> tuple[str, ...]:
    """The argv with `option` set to `value` (None: a switch): the first occurrence of its dest (any alias) replaced in
    place, later ones dropped, else the flag appended."""
    dest = reg.by_option[option].dest
    new = (option,) if value is None else (option, value)
    out: list[str] = []
    placed = False
    for s, e, d in _spans(argv, reg):
        if d == dest:
            if not placed:
                out.extend(new)
                placed = True
            continue
        out.extend(argv[s:e])
    return tuple(out) if placed else tuple(out) + new


def without(argv: tuple[str, ...], dest: str, reg: FlagRegistry) -> tuple[str, ...]:
    """The argv without any occurrence of a flag."""
    return tuple(t for s, e, d in _spans(argv, reg) if d != dest for t in argv[s:e])


def _set(argv: tuple[str, ...], reg: FlagRegistry) -> dict[str, str]:
    """Each flag the argv sets (by dest) as its last occurrence was typed: the option and its values."""
    out: dict[str, str] = {}
    for s, e, d in _spans(argv, reg):
        if d is not None:
            out[d] = " ".join(argv[s:e])
    return out


def differences(before: tuple[str, ...], after: tuple[str, ...],
                reg: FlagRegistry) -> list[tuple[str | None, str | None]]:
    """The flags two launches set differently, as (before, after) with their values (None: not set), in the order
    `after` sets them, then the ones it drops."""
    old, new = _set(before, reg), _set(after, reg)
    return [(old.get(d), new.get(d)) for d in [*new, *(d for d in old if d not in new)] if old.get(d) != new.get(d)]
