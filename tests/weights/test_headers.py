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


GOOD = {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]}


@pytest.mark.parametrize("header,field", [
    ({"w": [0, 8]}, "`w` must be an object with dtype, shape and data_offsets"),
    ({"w": {**GOOD, "dtype": None}}, "`w.dtype` must be a string, got None"),
    ({"w": {k: v for k, v in GOOD.items() if k != "dtype"}}, "`w.dtype` must be a string"),
    ({"w": {**GOOD, "shape": [2, -1]}}, "`w.shape` must be a list of non-negative integers, got [2, -1]"),
    ({"w": {**GOOD, "shape": [True]}}, "`w.shape` must be a list of non-negative integers, got [True]"),
    ({"w": {**GOOD, "shape": "2x2"}}, "`w.shape` must be a list of non-negative integers"),
    ({"w": {**GOOD, "data_offsets": [0, 8, 16]}}, "`w.data_offsets` must be two integers [start, end]"),
    ({"w": {**GOOD, "data_offsets": [8, 0]}}, "`w.data_offsets` must be two integers [start, end] with 0 <= start"),
    ({"w": {**GOOD, "data_offsets": [-8, 0]}}, "`w.data_offsets` must be two integers"),
    ({"w": {**GOOD, "data_offsets": [0, 8.0]}}, "`w.data_offsets` must be two integers"),
    ({"w": {**GOOD, "data_offsets": [False, True]}}, "`w.data_offsets` must be two integers"),
    ({"w": {**GOOD, "data_offsets": [0, 9]}}, "`w.data_offsets` end 9 is past the file's 8 data bytes"),
    ({"__metadata__": {"format": 1}, "w": GOOD}, "`__metadata__` must be an object of strings, got {'format': 1}"),
    ({"w\nx": {**GOOD, "dtype": 1}}, "`w\\nx.dtype` must be a string"),  # a name never breaks the line
    ({"w" * 500: {**GOOD, "dtype": 1}}, "`" + "w" * 77 + "....dtype` must be a string"),
])
def test_header_shape_is_checked_naming_file_and_field(tmp_path, header, field):
    f = tmp_path / "x.safetensors"
    raw = json.dumps(header).encode()
    f.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(8))
    with pytest.raises(BadInput) as exc:
        tensor_spans(f)
    assert exc.value.message.startswith(f"{f}: ") and field in exc.value.message
    assert "\n" not in exc.value.message and len(exc.value.message) < 300 + len(str(f))


def test_a_checked_header_gives_the_spans(tmp_path):
    f = tmp_path / "x.safetensors"
    raw = json.dumps({"__metadata__": {"format": "pt"}, "a": GOOD,
                      "b": {"dtype": "F32", "shape": [], "data_offsets": [8, 12]}}).encode()
    f.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(12))
    assert tensor_spans(f) == {"a": 8, "b": 4}


def test_header_that_is_not_utf8(tmp_path):
    f = tmp_path / "x.safetensors"
    f.write_bytes(struct.pack("<Q", 4) + b'{"\xff"')
    with pytest.raises(BadInput, match=r"safetensors header is not UTF-8 \(invalid byte at offset 10\)"):
        tensor_spans(f)


@pytest.mark.parametrize("index,field", [
    ({"metadata": [], "weight_map": {}}, "`metadata` must be an object, got []"),
    ({"metadata": {"total_size": -1}, "weight_map": {}}, "`metadata.total_size` must be a non-negative integer, got -1"),
    ({"metadata": {"total_size": True}, "weight_map": {}}, "`metadata.total_size` must be a non-negative integer"),
    ({"metadata": {"total_size": 1.5}, "weight_map": {}}, "`metadata.total_size` must be a non-negative integer"),
    ({"metadata": {"total_size": 1}, "weight_map": ["a"]}, "`weight_map` must be an object of tensor names to files"),
])
def test_index_shape_is_checked(tmp_path, index, field):
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(BadInput) as exc:
        index_total(tmp_path)
    assert exc.value.message.startswith(f"{tmp_path}/model.safetensors.index.json: ") and field in exc.value.message


def test_index_without_a_total_gives_no_total(tmp_path):
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"a": "b.safetensors"}}))
    assert index_total(tmp_path) is None


def test_index_over_its_bound_is_refused_unread(tmp_path):
    from hybridplan.limits import MAX_INDEX_BYTES

    with open(tmp_path / "model.safetensors.index.json", "wb") as fh:
        fh.truncate(MAX_INDEX_BYTES + 1)  # sparse: nothing is read
    with pytest.raises(BadInput, match="67,108,865 bytes, over the 67,108,864-byte bound"):
        index_total(tmp_path)


def test_shard_count_is_bounded(tmp_path, monkeypatch):
    import hybridplan.weights.headers as headers

    monkeypatch.setattr(headers, "MAX_WEIGHT_FILES", 2)
    for i in range(3):
        write_safetensors(tmp_path / f"model-{i}.safetensors", {"w": ("BF16", [1], 2)})
    with pytest.raises(BadInput, match="more than 2 .safetensors files"):
        from_directory(tmp_path)
