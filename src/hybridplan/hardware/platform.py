"""What an engine detects about the device it starts on (the part of a card its rules read)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Platform:
    """What the engine would detect about the device; unknown fields leave device-dependent defaults open."""

    device: str = "cuda"  # cuda | hip | xpu | npu | cpu
    sm: int | None = None  # compute capability x10 (90 = Hopper, 100 = B200, 120 = RTX 5090)
    gpu_memory_mib: int | None = None  # what nvidia-smi reports as memory.total

    @property
    def is_sm100(self) -> bool:
        return self.sm is not None and 100 <= self.sm < 110
