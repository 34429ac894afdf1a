"""Options several commands share, declared once (typer reads these declarations; they hold no state)."""

from __future__ import annotations

import typer

JSON = typer.Option(False, "--json", help="Print one JSON object.")
ENGINE_VERSION = typer.Option(None, "--engine-version", help="Engine version to model.")
GPU = typer.Option(None, "--gpu", help="A GPU from the catalog (rtx5090, h100-80gb, h200, b200, ...): size the pools "
                   "from its memory timeline.")
GPU_MEMORY_GIB = typer.Option(None, "--gpu-memory-gib", help="Override the GPU's memory (GiB, as nvidia-smi's "
                              "memory.total); alone: a generic CUDA card.")
WEIGHTS_GIB = typer.Option(None, "--weights-gib", help="Target weights per GPU in GiB (the boot log's 'Load weight end "
                           "... mem usage'), instead of an estimate.")
HUB = typer.Option(False, "--hub", help="Read checkpoint sizes from the Hugging Face Hub (needs network).")
