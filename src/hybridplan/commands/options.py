"""Options several commands share, declared once (typer reads these declarations; they hold no state).

Every number a user types is checked here, at the edge: finite, of the right sign, within hybridplan.limits; a bad
one is a usage error naming the option (exit 2).
"""

from __future__ import annotations

import math
from typing import Callable, Optional

import typer

from hybridplan.limits import MAX_CONTEXT, MAX_GPU_GIB, MAX_PARALLEL, MAX_REQUESTS


def bounded(lo: float, hi: float, why: str, *, lo_open: bool = False) -> Callable[[Optional[float]], Optional[float]]:
    """A typer callback refusing non-finite numbers and numbers outside [lo, hi] ((lo, hi] with lo_open)."""

    def check(value: Optional[float]) -> Optional[float]:
        if value is None:
            return value
        if not math.isfinite(value):
            raise typer.BadParameter(f"must be a finite number, got {value}")
        if value > hi or value < lo or (lo_open and value == lo):
            positive = (lo_open and lo == 0) or (lo == 1 and isinstance(value, int))
            span = f"positive and at most {_fmt(hi)}" if positive else f"between {_fmt(lo)} and {_fmt(hi)}"
            raise typer.BadParameter(f"must be {span} ({why}), got {_fmt(value)}")
        return value

    return check


def _fmt(x: float) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:g}"


def from_bound(name: str) -> Callable[[Optional[float]], Optional[float]]:
    """The callback of a request field's option: its range as engine/requests.py's FIELD_BOUNDS defines it (the web's
    schemas and the engines hold the same one)."""
    from hybridplan.engine.requests import FIELD_BOUNDS

    b = FIELD_BOUNDS[name]
    return bounded(b.lo if b.lo is not None else -math.inf, b.hi, b.why, lo_open=b.lo_open)


# A pool budget may be negative: the engine itself refuses it, with its own message.
POOL_BUDGET_CHECK = bounded(-MAX_GPU_GIB, MAX_GPU_GIB, "GiB on one GPU")
FREE_GIB_CHECK = bounded(0.0, MAX_GPU_GIB, "GiB on one GPU")

JSON = typer.Option(False, "--json", help="Print one JSON object.")
ENGINE_VERSION = typer.Option(None, "--engine-version", help="Engine version to model.")
PAGE_ENGINE_VERSION = typer.Option(None, "--engine-version",
                                   help="Model the page with this sglang release (default: the page's own).")
GPU = typer.Option(None, "--gpu", help="A GPU from the catalog (rtx5090, h100-80gb, h200, b200, ...): size the pools "
                   "from its memory timeline.")
GPU_MEMORY_GIB = typer.Option(None, "--gpu-memory-gib", callback=bounded(0.0, MAX_GPU_GIB, "GiB on one GPU", lo_open=True),
                              help="Override the GPU's memory (GiB, as nvidia-smi's memory.total); alone: a generic "
                              "CUDA card.")
WEIGHTS_GIB = typer.Option(None, "--weights-gib", callback=FREE_GIB_CHECK, help="Target weights per GPU in GiB (the "
                           "boot log's 'Load weight end ... mem usage'), instead of an estimate.")
HUB = typer.Option(False, "--hub", help="Read checkpoint sizes from the Hugging Face Hub (needs network).")
LENGTH_CHECK = bounded(1, MAX_CONTEXT, "tokens in one context")
REQUESTS_CHECK = bounded(1, MAX_REQUESTS, "requests one server holds")
REQUEST_LENGTH = typer.Option(..., "--request-length", "-L", callback=LENGTH_CHECK,
                              help="Average tokens per request (input + output).")
CONCURRENCY = typer.Option(..., "--concurrency", "-C", callback=REQUESTS_CHECK, help="Concurrent requests to serve.")
TP = typer.Option(1, "--tp", callback=bounded(1, MAX_PARALLEL, "GPUs in one deployment"), help="Tensor parallel size.")
MAX_MEM_FRACTION = typer.Option(None, "--max-mem-fraction", callback=bounded(0.0, 1.0, "a fraction", lo_open=True),
                                help="Use this --mem-fraction-static instead of the highest safe estimate.")
ENGINE = typer.Option("sglang", "--engine", help="The engine the command launches: sglang or vllm.")
KV_MEMORY_GIB = typer.Option(None, "--kv-memory-gib", callback=from_bound("kv_memory_gib"),
                             help="vLLM: the boot log's 'Available KV cache memory', GiB.")
