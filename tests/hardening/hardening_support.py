"""What the hardening tests share besides fixtures: the allocation bound, a bundled config to mutate, and the peak
allocation of a call (a module of its own: test files import it by a name no other test directory shares)."""

from __future__ import annotations

import json
import tracemalloc
from importlib import resources

PEAK_BOUND = 64 << 20  # bytes: what one refused request may allocate at most


def bundled_config(name: str = "Qwen__Qwen3.5-27B.json") -> dict:
    return json.loads((resources.files("hybridplan") / "data" / "configs" / name).read_text())


def measure(fn) -> tuple[int, Exception | None]:
    """Peak Python allocation while `fn` runs (tracemalloc), and what it raised."""
    tracemalloc.start()
    raised = None
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - returned for the caller to assert on
        raised = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, raised
