"""The GPU catalog (data/gpus.yaml), validated at load; ids, aliases and the Platform the engine would detect."""

from __future__ import annotations

import math
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hybridplan.engine.args import Platform
from hybridplan.errors import BadInput

MIB = 1 << 20
GIB = 1 << 30
GENERIC_ID = "custom"  # the id of a card known only by its memory; no catalog entry may take it


class GPU(BaseModel):
    """One card: what `get_device_memory_capacity` reports (MiB) and what the silicon supports."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    name: str
    vendor: Literal["nvidia", "amd"]
    device: Literal["cuda", "hip"]
    arch: str
    sm: Optional[int] = None  # compute capability x10 (CUDA only)
    gfx: Optional[str] = None  # ROCm target (AMD only)
    memory_mib: int = Field(gt=0)
    memory_source: Literal["observed", "assumed", "input"]
    # what torch.cuda.mem_get_info() reports as the total (the engine's P is measured against it): below memory.total
    # by the driver's reservation; observed values cite a public log line ("total capacity of X GiB")
    torch_total_mib: Optional[int] = Field(default=None, gt=0)
    torch_total_source: str = ""
    nominal_gb: float = Field(gt=0)
    unified: bool = False
    aliases: tuple[str, ...] = ()
    notes: str = ""

    @field_validator("sm")
    @classmethod
    def _sm_range(cls, v: Optional[int]) -> Optional[int]:
        if v is not None and not 30 <= v <= 200:
            raise ValueError(f"sm {v} is not a compute capability x10")
        return v

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
        return self.model_copy(update={"memory_mib": int(round(gib * 1024)), "memory_source": "input",
                                       "torch_total_mib": None, "torch_total_source": ""})

    def as_dict(self) -> dict[str, Any]:
        out = self.model_dump()
        out["memory_gib"] = self.memory_gib
        out["fp4_tensor_cores"] = self.fp4_tensor_cores
        out["fp8_tensor_cores"] = self.fp8_tensor_cores
        return out


class _Catalog(BaseModel):
    model_config = ConfigDict(extra="forbid")
    gpus: list[GPU]


@lru_cache(maxsize=1)
def _load() -> tuple[tuple[GPU, ...], dict[str, GPU]]:
    """The GPUs in file order and an index by id and alias. A malformed data file is a BadInput."""
    import yaml

    text = (resources.files("hybridplan") / "data" / "gpus.yaml").read_text()
    try:
        cat = _Catalog.model_validate(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))  # libyaml
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BadInput(f"gpus.yaml: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
    index: dict[str, GPU] = {}
    for gpu in cat.gpus:
        for key in (gpu.id, *gpu.aliases):
            if key in index or key == GENERIC_ID:
                raise BadInput(f"gpus.yaml: id or alias {key!r} is used twice or reserved")
            index[key] = gpu
    return tuple(cat.gpus), index


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
