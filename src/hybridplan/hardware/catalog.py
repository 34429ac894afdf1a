"""The GPU catalog (data/gpus.yaml), validated at load; ids, aliases and the Platform the engine would detect.

A card is a frozen dataclass that checks its own fields (no pydantic: `explain --gpu` starts without it).
"""

from __future__ import annotations

import math
import re
from dataclasses import MISSING, asdict, dataclass, fields, replace
from functools import lru_cache
from typing import Any, Literal, Optional

from hybridplan.hardware.platform import Platform
from hybridplan.errors import BadInput
from hybridplan.provenance import Source, Sourced

MIB = 1 << 20
GIB = 1 << 30
GENERIC_ID = "custom"  # the id of a card known only by its memory; no catalog entry may take it
_ID = re.compile(r"[a-z0-9][a-z0-9-]*")
_CHOICES = {"vendor": ("nvidia", "amd"), "device": ("cuda", "hip"), "memory_source": ("observed", "assumed", "input")}


@dataclass(frozen=True, kw_only=True)
class GPU:
    """One card: what `get_device_memory_capacity` reports (MiB) and what the silicon supports."""

    id: str
    name: str
    vendor: Literal["nvidia", "amd"]
    device: Literal["cuda", "hip"]
    arch: str
    sm: Optional[int] = None  # compute capability x10 (CUDA only)
    gfx: Optional[str] = None  # ROCm target (AMD only)
    memory_mib: int
    memory_source: Literal["observed", "assumed", "input"]
    # what torch.cuda.mem_get_info() reports as the total (the engine's P is measured against it): below memory.total
    # by the driver's reservation; observed values cite a public log line ("total capacity of X GiB")
    torch_total_mib: Optional[int] = None
    torch_total_source: str = ""
    nominal_gb: float
    unified: bool = False
    aliases: tuple[str, ...] = ()
    notes: str = ""

    def __post_init__(self) -> None:
        """Each field of the right type and range (ValueError naming it); nominal_gb a float, aliases a tuple."""
        for name in ("id", "name", "arch", "torch_total_source", "notes", *_CHOICES):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name}: must be a string")
        for name, choices in _CHOICES.items():
            if getattr(self, name) not in choices:
                raise ValueError(f"{name}: must be one of {', '.join(choices)}, got {getattr(self, name)!r}")
        if not _ID.fullmatch(self.id):
            raise ValueError(f"id: must be lower-case letters, digits and '-', got {self.id!r}")
        if self.gfx is not None and not isinstance(self.gfx, str):
            raise ValueError("gfx: must be a string")
        if self.sm is not None and not (_whole(self.sm) and 30 <= self.sm <= 200):
            raise ValueError(f"sm: {self.sm} is not a compute capability x10")
        if not (_whole(self.memory_mib) and self.memory_mib > 0):
            raise ValueError(f"memory_mib: must be a positive integer, got {self.memory_mib!r}")
        if self.torch_total_mib is not None and not (_whole(self.torch_total_mib) and self.torch_total_mib > 0):
            raise ValueError(f"torch_total_mib: must be a positive integer, got {self.torch_total_mib!r}")
        gb = self.nominal_gb
        if isinstance(gb, bool) or not isinstance(gb, (int, float)) or not (math.isfinite(gb) and gb > 0):
            raise ValueError(f"nominal_gb: must be a positive number, got {gb!r}")
        if not isinstance(self.unified, bool):
            raise ValueError("unified: must be true or false")
        if not isinstance(self.aliases, (list, tuple)) or not all(isinstance(a, str) for a in self.aliases):
            raise ValueError("aliases: must be a list of strings")
        object.__setattr__(self, "nominal_gb", float(gb))
        object.__setattr__(self, "aliases", tuple(self.aliases))

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * MIB

    @property
    def memory_gib(self) -> float:
        return self.memory_mib / 1024

    @property
    def generic(self) -> bool:
        """A card known only by its memory (`--gpu-memory-gib` alone): no catalog entry, so no recorded launches."""
        return self.id == GENERIC_ID

    @property
    def torch_total_known(self) -> bool:
        return self.torch_total_mib is not None and self.memory_source != "input"

    @property
    def fp4_tensor_cores(self) -> bool:
        """NVFP4 GEMMs need SM100/SM103 or SM120/SM121-class tensor cores (SM90 and older have none)."""
        return self.sm is not None and self.sm >= 100

    @property
    def fp8_tensor_cores(self) -> bool:
        """FP8 GEMMs: Ada (SM89), Hopper and Blackwell; CDNA3/CDNA4 on AMD."""
        return (self.sm is not None and self.sm >= 89) or self.vendor == "amd"

    def supports_quant(self, quant: str | None) -> tuple[bool, str]:
        """Whether a checkpoint quantization runs natively here, and why not."""
        q = (quant or "").lower()
        if self.sm is None and self.vendor == "nvidia":
            return True, ""  # a card given only by its memory: capability unknown, nothing is ruled out
        if "fp4" in q and not q.startswith("mx"):
            if not self.fp4_tensor_cores:
                return False, f"{self.name} has no FP4 tensor cores (NVFP4 needs SM100/SM120-class Blackwell)"
            return True, ""
        if "fp8" in q and not self.fp8_tensor_cores:
            return False, f"{self.name} has no FP8 tensor cores"
        return True, ""

    def platform(self) -> Platform:
        """What the engine detects: device, compute capability and memory.total in MiB."""
        return Platform(device=self.device, sm=self.sm, gpu_memory_mib=self.memory_mib)

    def with_memory_gib(self, gib: float) -> "GPU":
        """The same card with its memory overridden by the user (`--gpu-memory-gib`)."""
        if not math.isfinite(gib) or gib <= 0:
            raise BadInput(f"--gpu-memory-gib must be a positive number, got {gib}")
        return replace(self, memory_mib=int(round(gib * 1024)), memory_source="input", torch_total_mib=None,
                       torch_total_source="")

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["memory_gib"] = self.memory_gib
        out["fp4_tensor_cores"] = self.fp4_tensor_cores
        out["fp8_tensor_cores"] = self.fp8_tensor_cores
        return out


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@lru_cache(maxsize=1)
def _load() -> tuple[tuple[GPU, ...], dict[str, GPU]]:
    """data/gpus.yaml, read once."""
    from hybridplan.packaged import data_yaml

    return parse(data_yaml("gpus.yaml"))


def parse(data: object) -> tuple[tuple[GPU, ...], dict[str, GPU]]:
    """gpus.yaml's document as the GPUs in file order and an index by id and alias; a malformed one is a BadInput
    naming the entry and the field."""
    if not isinstance(data, dict) or not set(data) <= {"gpus", "driver_reserve_mib"} \
            or not isinstance(data.get("gpus"), list):
        raise BadInput("gpus.yaml: must be a mapping with `gpus`, a list of cards (and `driver_reserve_mib`)")
    gpus = tuple(_card(i, entry) for i, entry in enumerate(data["gpus"]))
    index: dict[str, GPU] = {}
    for gpu in gpus:
        for key in (gpu.id, *gpu.aliases):
            if key in index or key == GENERIC_ID:
                raise BadInput(f"gpus.yaml: id or alias {key!r} is used twice or reserved")
            index[key] = gpu
    return gpus, index


def _card(i: int, entry: object) -> GPU:
    """One entry of gpus.yaml as a GPU; what is wrong with it, naming the entry and the field."""
    if not isinstance(entry, dict):
        raise BadInput(f"gpus.yaml: gpus.{i}: must be a mapping")
    unknown = sorted(str(k) for k in entry if k not in {f.name for f in fields(GPU)})
    if unknown:
        raise BadInput(f"gpus.yaml: gpus.{i}.{unknown[0]}: not a field of a card")
    missing = [f.name for f in fields(GPU) if f.name not in entry and f.default is MISSING]
    if missing:
        raise BadInput(f"gpus.yaml: gpus.{i}.{missing[0]}: missing")
    try:
        return GPU(**entry)
    except ValueError as exc:
        raise BadInput(f"gpus.yaml: gpus.{i}.{exc}") from None


def catalog() -> tuple[GPU, ...]:
    """The GPUs in file order."""
    return _load()[0]


def custom(memory_gib: float) -> GPU:
    """A CUDA card known only by its memory (`--gpu-memory-gib` without `--gpu`)."""
    base = GPU(id=GENERIC_ID, name="GPU", vendor="nvidia", device="cuda", arch="unknown", memory_mib=1,
               memory_source="input", nominal_gb=max(memory_gib, 1e-3) * GIB / 1e9)
    return base.with_memory_gib(memory_gib)


def from_options(gpu: str | None, memory_gib: float | None) -> GPU | None:
    """The card the CLI options name: --gpu (with --gpu-memory-gib overriding its memory), or a custom card."""
    if gpu is not None:
        return lookup(gpu, memory_gib)
    return custom(memory_gib) if memory_gib is not None else None


def lookup(name: str, memory_gib: float | None = None) -> GPU:
    """A GPU by id or alias (case-insensitive); `memory_gib` overrides its memory."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    gpu = _load()[1].get(key)
    if gpu is None:
        raise BadInput(f"unknown GPU {name!r}; known: {', '.join(g.id for g in catalog())}")
    return gpu.with_memory_gib(memory_gib) if memory_gib is not None else gpu


@lru_cache(maxsize=1)
def driver_reserve() -> tuple[float, str]:
    """(MiB, note): what the driver keeps of memory.total on a card whose torch-visible total was not observed."""
    from hybridplan.packaged import data_yaml

    entry = (data_yaml("gpus.yaml") or {}).get("driver_reserve_mib")
    if not isinstance(entry, dict) or not isinstance(entry.get("value"), (int, float)):
        raise BadInput("gpus.yaml: driver_reserve_mib: expected {value: <MiB>, note: <text>}")
    return float(entry["value"]), " ".join(str(entry.get("note", "")).split())


def visible_estimate(gpu: GPU, reserve: tuple[float, str] | None = None) -> Sourced:
    """The total torch sees on the card: observed in a public log, else memory.total less the driver's reserve
    (`reserve`: (MiB, its note), default the catalog's)."""
    mib, note = reserve or driver_reserve()
    if gpu.torch_total_known and gpu.torch_total_mib is not None:
        return Sourced(value=gpu.torch_total_mib / 1024, source=Source.MEASURED, note=gpu.torch_total_source)
    return Sourced(value=(gpu.memory_mib - mib) / 1024, source=Source.ESTIMATE,
                   note=f"memory.total - {mib:g} MiB driver reserve ({note})")
