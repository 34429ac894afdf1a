"""Exact checkpoint bytes from a local directory: safetensors headers, else the index's `total_size`.

Both are read like every other user file: regular files only, bounded (hybridplan.textfile), nesting and integers
bounded (hybridplan.jsontext), then shape-checked as the safetensors library checks a header; a file that fails is
refused in one line naming the file and the field.
"""

from __future__ import annotations

import os
import struct
from itertools import islice
from pathlib import Path
from typing import Any

from hybridplan.errors import BadInput
from hybridplan.jsontext import parse_json
from hybridplan.limits import MAX_INDEX_BYTES, MAX_SAFETENSORS_HEADER, MAX_WEIGHT_FILES
from hybridplan.provenance import Source
from hybridplan.textfile import lookup, open_regular, read_text
from hybridplan.weights.inventory import Inventory, piece

INDEX = "model.safetensors.index.json"


def _shown(value: Any) -> str:
    """A value as an error message quotes it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _field(name: str, key: str = "") -> str:
    """A tensor's field as an error message names it: control characters escaped, a long name cut short."""
    shown = repr(name)[1:-1]
    return f"`{shown if len(shown) <= 80 else shown[:77] + '...'}{'.' + key if key else ''}`"


def _is_int(value: Any) -> bool:
    return type(value) is int  # a JSON true/false is a bool, never a count


def tensor_spans(path: Path) -> dict[str, int]:
    """Bytes of every tensor in one .safetensors file: end - start of its data_offsets (packed FP4 and scales exact)."""
    try:
        with open_regular(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            raw = fh.read(8)
            if len(raw) != 8:
                raise BadInput(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
            (n,) = struct.unpack("<Q", raw)
            if n > MAX_SAFETENSORS_HEADER:
                raise BadInput(f"{path}: safetensors header length {n:,} exceeds the format's "
                               f"{MAX_SAFETENSORS_HEADER:,}-byte limit")
            if 8 + n > size:
                raise BadInput(f"{path}: safetensors header length {n:,} runs past the end of the file "
                               f"({size:,} bytes): a truncated download?")
            blob = fh.read(n)
    except OSError as exc:
        raise BadInput(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path}: safetensors header is not UTF-8 (invalid byte at offset {8 + exc.start})") from None
    header = parse_json(text, origin=str(path), what="safetensors header")
    return header_spans(header, origin=str(path), data_bytes=size - 8 - n)


def header_spans(header: Any, *, origin: str, data_bytes: int | None = None) -> dict[str, int]:
    """Each tensor's bytes from a parsed header, after checking its shape: an object of tensors, each an object with
    a string `dtype`, a `shape` of non-negative integers and `data_offsets` [start, end] within the `data_bytes` that
    follow the header (safetensors tensor.rs validate), plus an optional `__metadata__` object of strings."""
    if not isinstance(header, dict):
        raise BadInput(f"{origin}: a safetensors header is a JSON object of tensors, got {type(header).__name__}")
    spans = {}
    for name, info in header.items():
        if name == "__metadata__":
            if not isinstance(info, dict) or not all(isinstance(v, str) for v in info.values()):
                raise BadInput(f"{origin}: `__metadata__` must be an object of strings, got {_shown(info)}")
            continue
        spans[name] = span(origin, name, info, data_bytes)
    return spans


def span(origin: str, name: str, info: Any, data_bytes: int | None = None) -> int:
    """One tensor's bytes, end - start of its checked data_offsets (also the Hub's parsed headers, weights.hub)."""
    if not isinstance(info, dict):
        raise BadInput(f"{origin}: {_field(name)} must be an object with dtype, shape and data_offsets, "
                       f"got {_shown(info)}")
    if not isinstance(info.get("dtype"), str):
        raise BadInput(f"{origin}: {_field(name, 'dtype')} must be a string, got {_shown(info.get('dtype'))}")
    shape = info.get("shape")
    if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
        raise BadInput(f"{origin}: {_field(name, 'shape')} must be a list of non-negative integers, got {_shown(shape)}")
    offsets = info.get("data_offsets")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_int(o) for o in offsets)
            and 0 <= offsets[0] <= offsets[1]):
        raise BadInput(f"{origin}: {_field(name, 'data_offsets')} must be two integers [start, end] with 0 <= start <= end, "
                       f"got {_shown(offsets)}")
    start, end = offsets
    if data_bytes is not None and end > data_bytes:
        raise BadInput(f"{origin}: {_field(name, 'data_offsets')} end {end:,} is past the file's {data_bytes:,} data bytes: "
                       "a truncated download?")
    return int(end - start)


def index_total(directory: Path) -> int | None:
    """`metadata.total_size` of model.safetensors.index.json, when the index is there and gives one. The index must
    be an object with an object `weight_map` (what the engine's loader reads) and, when present, an object
    `metadata` whose `total_size` is a non-negative integer."""
    index = directory / INDEX
    if lookup(index) is None:
        return None
    data = parse_json(read_text(index, limit=MAX_INDEX_BYTES), origin=str(index), what="safetensors index")
    if not isinstance(data, dict):
        raise BadInput(f"{index}: a safetensors index is a JSON object with `metadata` and `weight_map`, "
                       f"got {type(data).__name__}")
    if not isinstance(data.get("weight_map"), dict):
        raise BadInput(f"{index}: `weight_map` must be an object of tensor names to files, "
                       f"got {_shown(data.get('weight_map'))}")
    meta = data.get("metadata", {})
    if not isinstance(meta, dict):
        raise BadInput(f"{index}: `metadata` must be an object, got {_shown(meta)}")
    total = meta.get("total_size")
    if total is None:
        return None
    if not _is_int(total) or total < 0:
        raise BadInput(f"{index}: `metadata.total_size` must be a non-negative integer, got {_shown(total)}")
    return int(total)


def from_directory(directory: Path) -> Inventory | int | None:
    """The directory's tensors from their headers; else the index total (int); None when neither is there."""
    files = sorted(islice(directory.glob("*.safetensors"), MAX_WEIGHT_FILES + 1))
    if len(files) > MAX_WEIGHT_FILES:
        raise BadInput(f"{directory}: more than {MAX_WEIGHT_FILES:,} .safetensors files")
    if files:
        pieces = []
        for f in files:
            pieces += [piece(name, nbytes) for name, nbytes in tensor_spans(f).items()]
        return Inventory(pieces=tuple(pieces), source=Source.HEADERS,
                         note=f"safetensors headers of {len(files)} file(s) in {directory}")
    return index_total(directory)
