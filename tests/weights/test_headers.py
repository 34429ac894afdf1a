"""Exact bytes from safetensors headers (data spans, so packed FP4 and scales count as stored) and index totals."""

from __future__ import annotations

import json
import struct

import pytest

from hybridplan.errors import BadInput
from hybridplan.provenance import Source
from hybridplan.weights.headers import from_directory, index_total, tensor_spans
from hybridplan.weights.inventory import Inventory


def write_safetensors(path, tensors: dict[str, tuple[str, list[int], int]]) -> None:
    """A real safetensors file: u64 header length, JSON header, then the data bytes."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, (dtype, shape, nbytes) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    raw = json.dumps(header).encode()
    with path.open("wb") as fh:
        fh.write(struct.pack("<Q", len(raw)) + raw)
        fh.truncate(8 + len(raw) + offset)  # a sparse tail: the data bytes exist without being written


def test_spans_count_packed_fp4_and_scales_exactly(tmp_path):
    f = tmp_path / "model-00001-of-00001.safetensors"
    write_safetensors(f, {
        "model.layers.0.mlp.down_proj.weight": ("U8", [5120, 8704], 5120 * 8704),  # 17408 fp4 values packed
        "model.layers.0.mlp.down_proj.weight_scale": ("F8_E4M3", [5120, 1088], 5120 * 1088),
        "model.layers.0.mlp.down_proj.weight_scale_2": ("F32", [], 4),
        "lm_head.weight": ("BF16", [248320, 5120], 248320 * 5120 * 2),
    })
    spans = tensor_spans(f)
    assert spans["model.layers.0.mlp.down_proj.weight"] == 44_564_480
    assert spans["model.layers.0.mlp.down_proj.weight_scale_2"] == 4
    inv = from_directory(tmp_path)
    assert isinstance(inv, Inventory) and inv.source is Source.HEADERS
    assert inv.total() == 44_564_480 + 5_570_560 + 4 + 2_542_796_800
    by = {p.name: p for p in inv.pieces}
    assert by["lm_head.weight"].shard == "head" and by["model.layers.0.mlp.down_proj.weight"].layer == 0


def test_index_total_when_no_shards_are_local(tmp_path):
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 55562855904},
                                                                      "weight_map": {}}))
    assert index_total(tmp_path) == 55_562_855_904
    assert from_directory(tmp_path) == 55_562_855_904


def test_empty_directory_has_no_facts(tmp_path):
    assert from_directory(tmp_path) is None


@pytest.mark.parametrize("blob", [b"\x01\x00", struct.pack("<Q", 1 << 40), struct.pack("<Q", 5) + b"{nope"])
def test_malformed_headers_are_bad_input(tmp_path, blob):
    f = tmp_path / "x.safetensors"
    f.write_bytes(blob)
    with pytest.raises(BadInput):
        tensor_spans(f)
