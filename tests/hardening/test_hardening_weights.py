"""Weights metadata as it comes off a broken download: each bad safetensors header or index is one line naming the
file and the field (exit 2, HTTP 400, the server answering on), a FIFO is refused without blocking, and an answer
that does not need the checkpoint's bytes is given with the estimate that replaced them, noted."""

from __future__ import annotations

import json
import os
import struct
import threading

import pytest
from hardening_support import bundled_config

INDEX = "model.safetensors.index.json"
DEEP = "[" * 100_000 + "]" * 100_000


def _safetensors(header: bytes, data: int = 0):
    def write(d):
        with open(d / "model.safetensors", "wb") as fh:
            fh.write(struct.pack("<Q", len(header)) + header)
            fh.truncate(8 + len(header) + data)  # sparse data bytes

    return write


def _tensor(offsets) -> bytes:
    return json.dumps({"model.layers.0.mlp.up_proj.weight": {"dtype": "BF16", "shape": [2],
                                                             "data_offsets": offsets}}).encode()


def _index(raw: bytes):
    return lambda d: (d / INDEX).write_bytes(raw)


CASES = [
    ("header a JSON list", _safetensors(b"[1, 2]"), "model.safetensors: a safetensors header is a JSON object of "
     "tensors, got list"),
    ("header nested 100,000 deep", _safetensors(DEEP.encode()), "model.safetensors: safetensors header nests deeper "
     "than 64 levels"),
    ("string data_offsets", _safetensors(_tensor(["0", "4"]), 4), "model.safetensors: "
     "`model.layers.0.mlp.up_proj.weight.data_offsets` must be two integers [start, end]"),
    ("offsets past the data", _safetensors(_tensor([0, 4096]), 4), "`model.layers.0.mlp.up_proj.weight.data_offsets` "
     "end 4,096 is past the file's 4 data bytes"),
    ("5,000-digit offset", _safetensors(_tensor([0, 7]).replace(b"7]", b"9" * 5000 + b"]"), 4),
     "`model.layers.0.mlp.up_proj.weight.data_offsets[1]`: an integer of 5,000 digits"),
    ("header length past the file", lambda d: (d / "model.safetensors").write_bytes(struct.pack("<Q", 64) + b"{}"),
     "model.safetensors: safetensors header length 64 runs past the end of the file (10 bytes)"),
    ("index total_size 'abc'", _index(b'{"metadata": {"total_size": "abc"}, "weight_map": {}}'),
     f"{INDEX}: `metadata.total_size` must be a non-negative integer, got 'abc'"),
    ("index a JSON list", _index(b"[1, 2]"), f"{INDEX}: a safetensors index is a JSON object with `metadata` and "
     "`weight_map`, got list"),
    ("index not UTF-8", _index(b'{"metadata": {"total_size": 1}, "weight_map": {"\xff": "a"}}'),
     f"{INDEX}: not UTF-8 text (invalid byte at offset 48)"),
    ("index nested 100,000 deep", _index(DEEP.encode()), f"{INDEX}: safetensors index nests deeper than 64 levels"),
    ("index without a weight_map", _index(b'{"metadata": {"total_size": 1}}'), f"{INDEX}: `weight_map` must be an "
     "object"),
]


def _checkpoint(tmp_path, write=None):
    (tmp_path / "config.json").write_text(json.dumps(bundled_config()))
    if write is not None:
        write(tmp_path)
    return str(tmp_path)


def _explain(path: str, *options: str) -> list[str]:
    return ["explain", "--gpu", "h200", *options, "--", "python", "-m", "sglang.launch_server", "--model-path", path,
            "--tp", "2"]


@pytest.fixture
def fifo(tmp_path):
    """A FIFO at a path, and a guard: should the code under test block opening it, a writer opens it after a few
    seconds and closes it, so the reader sees end-of-file and the test fails on its assertion instead of hanging."""
    done = threading.Event()

    def make(path):
        os.mkfifo(path)

        def release():
            if not done.wait(5):
                try:
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # ENXIO when nobody is blocked reading
                except OSError:
                    pass

        threading.Thread(target=release, daemon=True).start()
        return path

    yield make
    done.set()


@pytest.mark.parametrize("case,write,field", CASES, ids=[c[0] for c in CASES])
def test_bad_weights_metadata_is_one_line(refused, tmp_path, case, write, field):
    err = refused(_explain(_checkpoint(tmp_path, write)), field)
    assert err.startswith(f"error: {tmp_path}/")


@pytest.mark.parametrize("name", ["model.safetensors", INDEX])
def test_a_fifo_is_refused_without_blocking(refused, tmp_path, fifo, name):
    fifo(tmp_path / name)
    refused(_explain(_checkpoint(tmp_path)), f"{name}: not a regular file")


def test_an_answer_that_does_not_need_the_bytes_says_which_estimate_replaced_them(cli_json, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    _, estimated = cli_json(*_explain(_checkpoint(bare), "--json", "--weights-gib", "26"))
    broken = tmp_path / "broken"
    broken.mkdir()
    code, out = cli_json(*_explain(_checkpoint(broken, _safetensors(b"[1, 2]")), "--json", "--weights-gib", "26"))
    assert code == 0
    memory = out["memory"]
    assert memory["weights"]["checkpoint_bytes"] == estimated["memory"]["weights"]["checkpoint_bytes"]
    assert memory["weights"]["checkpoint_bytes"]["source"] == "estimate"
    assert memory["timeline"]["target_weights_gib"]["value"] == 26.0
    assert f"{broken}/model.safetensors: a safetensors header is a JSON object of tensors, got list; not needed for " \
           "this answer, the checkpoint bytes are the estimate instead (estimated from config.json" \
           in "\n".join(memory["warnings"])
    assert out["max_total_num_tokens"] == estimated["max_total_num_tokens"]


@pytest.fixture
def serve(tmp_path):
    """The web app allowed to read below tmp_path (`hybridplan serve --allow-path`)."""
    from fastapi.testclient import TestClient

    from hybridplan.model_sources import ModelSourcePolicy
    from hybridplan.web.app import create_app
    from hybridplan.web.hosts import HostPolicy

    app = create_app(hosts=HostPolicy(host="127.0.0.1", port=8000), sources=ModelSourcePolicy.of([tmp_path]))
    with TestClient(app, base_url="http://127.0.0.1:8000", raise_server_exceptions=False) as c:
        yield c


def _post(client, path: str):
    return client.post("/api/explain", json={"command": f"--model-path {path} --tp 2", "gpu": "h200"})


def test_serve_answers_400_for_each_and_stays_up(serve, tmp_path, fifo):
    for i, (case, write, field) in enumerate(CASES):
        d = tmp_path / str(i)
        d.mkdir()
        res = _post(serve, _checkpoint(d, write))
        assert res.status_code == 400 and field in res.json()["error"]["message"], (case, res.text)
    d = tmp_path / "fifo"
    d.mkdir()
    fifo(d / "model.safetensors")
    res = _post(serve, _checkpoint(d))
    assert res.status_code == 400 and res.json()["error"]["message"] == f"{d}/model.safetensors: not a regular file"
    good = tmp_path / "good"
    good.mkdir()
    res = _post(serve, _checkpoint(good))
    assert res.status_code == 200 and res.json()["memory"]["weights"]["checkpoint_bytes"]["source"] == "estimate"
