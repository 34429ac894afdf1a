"""The card this machine runs the engine on, read from `nvidia-smi` (the guard, when no card is named): its name and
memory.total, and the memory other processes hold on it (vLLM's startup check counts what is free, not the total).

The cards are those nvidia-smi lists, narrowed by CUDA_VISIBLE_DEVICES (indices or UUIDs) as CUDA narrows them for
the engine; they must all be one model, else the guard asks for --gpu. A name the catalog has (data/gpus.yaml,
exactly as nvidia-smi prints it) is that catalog card, its measured memory.total overriding the catalog's where the
two differ; any other card is a card known by its memory (`--gpu-memory-gib`). Without nvidia-smi nothing is guessed.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from hybridplan.errors import BadInput

GPUS = ("--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader,nounits")
APPS = ("--query-compute-apps=gpu_uuid,used_memory", "--format=csv,noheader,nounits")
NAME_IT = "name the card with --gpu (a catalog id) or --gpu-memory-gib"


@dataclass(frozen=True, kw_only=True)
class DetectedCard:
    """What nvidia-smi says of the cards the engine will see, and the catalog card that is."""

    name: str  # as nvidia-smi prints it
    memory_mib: int  # memory.total
    others_mib: int | None  # held by other processes on the busiest of the cards (None: a process nvidia-smi lists
    # without the memory it holds)
    count: int  # the cards the engine sees
    gpu: str | None  # the catalog id (None: a card the catalog does not have)
    gpu_memory_gib: float | None  # the memory to size with, where the catalog's is not the measured one

    def label(self) -> str:
        """The card as the guard names it."""
        if self.gpu is not None:
            return self.gpu if self.gpu_memory_gib is None else f"{self.gpu} ({self.memory_mib} MiB)"
        return f"{self.name} ({self.memory_mib} MiB, not in the catalog)"


def _smi(exe: str, args: tuple[str, ...]) -> list[list[str]]:
    """nvidia-smi's CSV rows, fields stripped; BadInput when it fails."""
    try:
        proc = subprocess.run([exe, *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BadInput(f"nvidia-smi did not answer ({exc}); {NAME_IT}") from None
    if proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise BadInput(f"nvidia-smi failed ({said[0] if said else f'exit {proc.returncode}'}); {NAME_IT}")
    return [[f.strip() for f in line.split(",")] for line in proc.stdout.splitlines() if line.strip()]


def _mib(text: str, what: str) -> int:
    try:
        return int(float(text))
    except ValueError:
        raise BadInput(f"nvidia-smi reports {what} as {text!r}; {NAME_IT}") from None


def _visible(rows: list[list[str]], environ: Mapping[str, str]) -> list[list[str]]:
    """The rows (index, uuid, name, memory.total) CUDA_VISIBLE_DEVICES leaves the engine (all when it is unset)."""
    given = environ.get("CUDA_VISIBLE_DEVICES")
    if given is None:
        return rows
    wanted = [w.strip() for w in given.split(",") if w.strip()]
    out = [r for w in wanted for r in rows if w == r[0] or (w.startswith("GPU-") and r[1].startswith(w))]
    if not out:
        raise BadInput(f"CUDA_VISIBLE_DEVICES={given!r} names none of the cards nvidia-smi lists; {NAME_IT}")
    return out


def detect(environ: Mapping[str, str]) -> DetectedCard:
    """The card nvidia-smi (on environ's PATH) reports; BadInput where there is none to read, or several models."""
    from hybridplan.hardware.catalog import catalog

    exe = shutil.which("nvidia-smi", path=environ.get("PATH"))
    if exe is None:
        raise BadInput(f"no --gpu and no nvidia-smi on PATH to read the card from: {NAME_IT} (the guard does not "
                       "guess)")
    rows = [r[:2] + [", ".join(r[2:-1]), r[-1]] for r in _smi(exe, GPUS) if len(r) >= 4]
    if not rows:
        raise BadInput(f"nvidia-smi lists no card; {NAME_IT}")
    cards = _visible(rows, environ)
    models = sorted({(r[2], r[3]) for r in cards})
    if len(models) > 1:
        raise BadInput("nvidia-smi lists different cards (" + "; ".join(f"{n}, {m} MiB" for n, m in models) +
                       f"); {NAME_IT}")
    name, total = models[0]
    known = {g.name.lower(): g for g in catalog()}.get(" ".join(name.split()).lower())
    if total.strip("[]").upper() == "N/A" and known is not None:  # unified memory (GB10) reports no total
        memory = known.memory_mib
    else:
        memory = _mib(total, f"memory.total of {name}")
    held: dict[str, int | None] = {}
    for uuid, used in (r[:2] for r in _smi(exe, APPS) if len(r) >= 2):
        before = held.get(uuid, 0)
        mib = _mib(used, "a process's used_memory") if used[:1].isdigit() else None  # [N/A]: not reported
        held[uuid] = None if before is None or mib is None else before + mib
    busiest = [held.get(r[1], 0) for r in cards]
    return DetectedCard(name=name, memory_mib=memory,
                        others_mib=None if None in busiest else max(m for m in busiest if m is not None),
                        count=len(cards), gpu=None if known is None else known.id,
                        gpu_memory_gib=None if known is not None and known.memory_mib == memory else memory / 1024)
