"""`--sweep flag=start:stop:step` (or `flag=a,b,c`): the values one flag takes across a measured sweep."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from itertools import product

from hybridplan.errors import BadInput

MAX_POINTS = 1000


@dataclass(frozen=True, kw_only=True)
class Sweep:
    """One swept flag (`--mem-fraction-static`) and its values, as the command will spell them."""

    flag: str
    values: tuple[str, ...]


def parse_sweep(spec: str, known_flags: set[str]) -> Sweep:
    """`mem-fraction-static=0.84:0.96:0.01` (inclusive, decimal steps) or `mem-fraction-static=0.85,0.9`."""
    name, eq, rng = spec.partition("=")
    flag = "--" + name.strip().lstrip("-")
    if not eq or not rng or flag == "--":
        raise BadInput(f"--sweep takes FLAG=START:STOP:STEP or FLAG=A,B,...; got {spec!r}")
    if flag not in known_flags:
        raise BadInput(f"--sweep {spec}: {flag} is not a flag of the engine")
    if ":" in rng:
        parts = rng.split(":")
        try:
            start, stop, step = (Decimal(p) for p in parts)
        except (InvalidOperation, ValueError):
            raise BadInput(f"--sweep {spec}: START:STOP:STEP must be numbers") from None
        if len(parts) != 3 or step <= 0 or stop < start:
            raise BadInput(f"--sweep {spec}: needs START <= STOP and a positive STEP")
        count = int((stop - start) / step) + 1
        if count > MAX_POINTS:
            raise BadInput(f"--sweep {spec}: {count} values; at most {MAX_POINTS}")
        values = tuple(str((start + i * step).quantize(step)) for i in range(count))
    else:
        values = tuple(v.strip() for v in rng.split(",") if v.strip())
        if not values:
            raise BadInput(f"--sweep {spec}: no values")
    return Sweep(flag=flag, values=values)


def combinations(sweeps: list[Sweep]) -> list[tuple[tuple[str, str], ...]]:
    """Every combination of the swept values, as (flag, value) pairs; one empty combination without sweeps."""
    return [tuple(zip((s.flag for s in sweeps), vals)) for vals in product(*(s.values for s in sweeps))]


def label(combo: tuple[tuple[str, str], ...]) -> str:
    """`mem-fraction-static=0.85` (the store's `sweep` column)."""
    return " ".join(f"{flag[2:]}={value}" for flag, value in combo)
