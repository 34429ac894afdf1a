"""Exact checkpoint bytes from a local directory: safetensors headers, else the index's `total_size`."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from hybridplan.errors import BadInput
from hybridplan.provenance import Source
from hybridplan.weights.inventory import Inventory, piece

MAX_HEADER = 100 * 1024 * 1024  # the safetensors format caps the JSON header at 100 MB


def tensor_spans(path: Path) -> dict[str, int]:
    """Bytes of every tensor in one .safetensors file: end - start of its data_offsets (packed FP4 and scales exact)."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(8)
            if len(raw) != 8:
                raise BadInput(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
            (n,) = struct.unpack("<Q", raw)
            if n > MAX_HEADER:
                raise BadInput(f"{path}: safetensors header length {n} exceeds the format's 100 MB limit")
            header = json.loads(fh.read(n))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: unreadable safetensors header ({exc})") from None
    spans = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            start, end = info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise BadInput(f"{path}: tensor {name!r} has no data_offsets") from None
        spans[name] = int(end) - int(start)
    return spans


def index_total(directory: Path) -> int | None:
    """`metadata.total_size` of model.safetensors.index.json, when present."""
    index = directory / "model.safetensors.index.json"
    if not index.is_file():
        return None
    try:
        total = json.loads(index.read_text()).get("metadata", {}).get("total_size")
    except (OSError, json.JSONDecodeError) as exc:
        raise BadInput(f"{index}: unreadable index ({exc})") from None
    return int(total) if total is not None else None


def from_directory(directory: Path) -> Inventory | int | None:
    """The directory's tensors from their headers; else the index total (int); None when neither is there."""
    files = sorted(directory.glob("*.safetensors"))
    if files:
        pieces = []
        for f in files:
            pieces += [piece(name, nbytes) for name, nbytes in tensor_spans(f).items()]
        return Inventory(pieces=tuple(pieces), source=Source.HEADERS,
                         note=f"safetensors headers of {len(files)} file(s) in {directory}")
    return index_total(directory)
