"""What every modelled engine release offers, whichever way it lays out memory (the base of each engine's protocol)."""

from __future__ import annotations

from typing import Protocol

from hybridplan.engine.registry import FlagRegistry


class EngineRelease(Protocol):
    """What every modelled engine release offers, whichever way it lays out memory."""

    @property
    def name(self) -> str:
        """The engine: "sglang" or "vllm"."""
        ...

    @property
    def version(self) -> str:
        """The release, e.g. "0.5.23" or "0.33.0"."""
        ...

    @property
    def rules_package(self) -> str:
        """The Python package whose functions mirror this release (conformance reports name rules under it)."""
        ...

    def registry(self) -> FlagRegistry:
        """The release's flag registry (its argparse options, defaults and choices)."""
        ...
