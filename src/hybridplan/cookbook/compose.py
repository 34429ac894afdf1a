"""Composing a command: cell flags + overlay picks (strip, replace in place, append), env merge, the calculator's
ratio slot, Playground-style deltas and multi-node injection. Pure functions over lists of flag strings.

A flag string is one flag with its value (`"--mem-fraction-static 0.9"`); its *family* is the first whitespace- or
`=`-delimited token (`--mem-fraction-static`). Every strip/replace rule works on families (cookbook-semantics §3.4).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping

from hybridplan.cookbook.conditions import evaluate
from hybridplan.cookbook.schema import Page, expand

RATIO = "--mamba-full-memory-ratio"
EXPLICIT_SIZE = "--max-mamba-cache-size"
RATIO_SLOT = "\0ratio"  # where the calculator's ratio goes; never emitted as such
MULTI_NODE_ANCHORS = ("--enable-dp-attention", "--dp-size", "--dp", "--tp-size", "--tp")
MULTI_NODE_FLAGS = ("--nnodes", "--node-rank", "--dist-init-addr")
_FAMILY_END = re.compile(r"[\s=]")


@lru_cache(maxsize=8192)
def family(flag: str) -> str:
    """The first whitespace- or `=`-delimited token of a flag string (memoised: a page repeats its flag strings)."""
    return _FAMILY_END.split(flag.strip(), maxsplit=1)[0]


def flag_value(flags: list[str] | tuple[str, ...], name: str) -> str | None:
    """The value of the first flag of a family (`--x v` or `--x=v`); '' for a bare switch; None if absent."""
    for f in flags:
        if family(f) == name:
            rest = f.strip()[len(name):]
            return rest[1:].strip() if rest[:1] in ("=", " ", "\t") else rest.strip()
    return None


@dataclass(frozen=True)
class Picks:
    """What the picked overlay options contribute for one selection, concatenated in row order."""

    flags: tuple[str, ...]
    env: tuple[str, ...]
    strip: tuple[str, ...]
    hints: tuple[str, ...]


def overlay_picks(page: Page, sel: Mapping[str, str]) -> Picks:
    """overlayPick + overlayPart: visible rows, their visible, enabled pick; row-level strips apply too
    (the docs ignore them, cookbook-semantics §7.14)."""
    flags: list[str] = []
    env: list[str] = []
    strip: list[str] = []
    hints: list[str] = []
    for dim in page.overlay_dims:
        if not evaluate(dim.show_when, sel):
            continue
        opt = dim.option(sel.get(dim.id, ""))
        if opt is None or not evaluate(opt.show_when, sel) or opt.disabled_reason(sel) is not None:
            continue
        flags += expand(opt.flags, sel)
        env += expand(opt.env, sel)
        strip += expand(dim.strip, sel) + expand(opt.strip, sel)
        hints += expand(opt.hints, sel)
    return Picks(flags=tuple(flags), env=tuple(env), strip=tuple(strip), hints=tuple(hints))


def with_ratio_slot(flags: list[str] | tuple[str, ...]) -> list[str]:
    """The cell's flags with a slot for the calculator's ratio before `--host` (or at the end), unless the
    cell sizes the state pool itself (cellWithRatio; also skipped on `--max-mamba-cache-size`, §7.16)."""
    out = list(flags)
    if any(family(f) in (RATIO, EXPLICIT_SIZE) for f in out):
        return out
    at = next((i for i, f in enumerate(out) if family(f).startswith("--host")), len(out))
    return out[:at] + [RATIO_SLOT] + out[at:]


def overlay_compose(cell_flags: list[str], add: tuple[str, ...], strip: tuple[str, ...]) -> list[str]:
    """overlayCompose: strip families from the cell, splicing each same-family addition in place (each addition is
    used once), then append the unused additions. With no strips the additions follow the cell's flags.

    The ratio slot is never stripped; an addition of the ratio family fills it in place whether or not the option
    strips the family (the docs would emit two ratio flags, or none, §7.15).
    """
    used = [False] * len(add)

    def take(fam: str) -> list[str]:
        hits = []
        for i, a in enumerate(add):
            if not used[i] and family(a) == fam:
                used[i] = True
                hits.append(a)
        return hits

    out: list[str] = []
    for f in cell_flags:
        if f == RATIO_SLOT:
            out += take(RATIO) or [f]
        elif family(f) in strip:
            out += take(family(f))
        else:
            out.append(f)
    return out + [a for i, a in enumerate(add) if not used[i]]


def fill_ratio_slot(flags: list[str], ratio_text: str | None) -> list[str]:
    """Put the calculator's value in the slot; drop the slot when there is no value or the composed flags size
    the state pool explicitly (a ratio next to `--max-mamba-cache-size` would be stale, §7.16)."""
    explicit = any(family(f) == EXPLICIT_SIZE for f in flags if f != RATIO_SLOT)
    out = []
    for f in flags:
        if f != RATIO_SLOT:
            out.append(f)
        elif ratio_text is not None and not explicit:
            out.append(f"{RATIO} {ratio_text}")
    return out


def without_slot(flags: list[str]) -> list[str]:
    return [f for f in flags if f != RATIO_SLOT]


def merge_env(base: list[str] | tuple[str, ...], extra: list[str] | tuple[str, ...]) -> list[str]:
    """`KEY=value` lists: a later entry for the same key replaces the earlier one in place, new keys append."""
    out = list(base)
    for entry in extra:
        key = entry.split("=", 1)[0]
        at = next((i for i, e in enumerate(out) if e.split("=", 1)[0] == key), None)
        if at is None:
            out.append(entry)
        else:
            out[at] = entry
    return out


def apply_delta(flags: list[str], delta: list[str] | tuple[str, ...], strip: tuple[str, ...] = ()) -> list[str]:
    """A Playground-style delta on a base command (flagSelects apply): the first base flag of each family the
    delta emits is replaced in place by the delta's flags of that family (later duplicates dropped), other base
    flags of a stripped family are removed, new families go before `--host`."""
    fams = {family(d) for d in delta}
    out: list[str] = []
    placed: set[str] = set()
    for f in flags:
        fam = family(f)
        if fam in fams:
            if fam not in placed:
                out += [d for d in delta if family(d) == fam]
                placed.add(fam)
        elif fam not in strip:
            out.append(f)
    new = [d for d in delta if family(d) not in placed]
    at = next((i for i, f in enumerate(out) if family(f).startswith("--host")), len(out))
    return out[:at] + new + out[at:]


def nnodes_for(page: Page, sel: Mapping[str, str], cell_nnodes: int) -> int:
    """parseNnodes: an option's `nnodes`, or `single`/`multi-N` ids of a `nodes` dim; else the cell's nnodes."""
    dim = page.dimension("nodes")
    if dim is None or page.is_overlay("nodes"):
        return cell_nnodes
    opt = dim.option(sel.get("nodes", ""))
    if opt is not None and opt.nnodes is not None:
        return opt.nnodes
    m = re.fullmatch(r"multi-(\d+)", sel.get("nodes", ""))
    return int(m.group(1)) if m else 1


def inject_multi_node(flags: list[str], nnodes: int) -> list[str]:
    """`--nnodes N --node-rank {{NODE_RANK}} --dist-init-addr {{NODE0_IP}}:20000` after the first anchor present
    (dp-attention, dp, tp, in that priority), else after `--model-path`; nothing if the flags carry `--nnodes`."""
    if nnodes <= 1 or any(family(f) == "--nnodes" for f in flags):
        return list(flags)
    trio = [f"--nnodes {nnodes}", "--node-rank {{NODE_RANK}}", "--dist-init-addr {{NODE0_IP}}:20000"]
    fams = [family(f) for f in flags]
    for anchor in MULTI_NODE_ANCHORS + ("--model-path",):
        if anchor in fams:
            at = fams.index(anchor) + 1
            return flags[:at] + trio + flags[at:]
    return trio + list(flags)
