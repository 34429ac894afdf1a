"""Config reading: only bounded regular files of UTF-8 JSON, bounded nesting, schema-checked geometry; paths the OS
cannot look up and `~` are handled without surprises."""

from __future__ import annotations

import json
import os

import pytest
from hardening_support import PEAK_BOUND, bundled_config, measure

from hybridplan.errors import BadInput
from hybridplan.limits import MAX_CONFIG_BYTES


def _explain(path: str) -> list[str]:
    return ["explain", "--", "--model-path", path]


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_devices_are_not_read(refused, path):
    peak, raised = measure(lambda: __import__("hybridplan.models.loader", fromlist=["x"]).resolve_config(path))
    assert isinstance(raised, BadInput) and "not a regular file" in raised.message and peak < PEAK_BOUND
    refused(_explain(path), "not a regular file")


def test_fifo_is_not_opened(refused, tmp_path):
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)  # opening it for reading without O_NONBLOCK would block forever
    refused(_explain(str(fifo)), "not a regular file")
    refused(_explain(str(tmp_path)), "not a regular file")


def test_hf_quant_config_sidecar_fifo(refused, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(bundled_config()))
    os.mkfifo(tmp_path / "hf_quant_config.json")
    refused(_explain(str(tmp_path)), "hf_quant_config.json: not a regular file")


def test_directory_without_config(refused, tmp_path):
    refused(_explain(str(tmp_path)), "no config.json in this directory")


def test_config_json_that_is_a_directory(refused, tmp_path):
    (tmp_path / "config.json").mkdir()
    refused(_explain(str(tmp_path)), "config.json: not a regular file")


def test_oversized_config_is_refused_unread(refused, tmp_path):
    big = tmp_path / "config.json"
    with open(big, "wb") as fh:
        fh.truncate(MAX_CONFIG_BYTES + 1)  # sparse: nothing is written or read
    from hybridplan.models.loader import resolve_config

    peak, raised = measure(lambda: resolve_config(str(tmp_path)))
    assert isinstance(raised, BadInput) and peak < PEAK_BOUND
    refused(_explain(str(tmp_path)), "16,777,216-byte bound")


def test_invalid_utf8(refused, tmp_path):
    (tmp_path / "config.json").write_bytes(b'{"model_type": "qwen3_5\xff"}')
    refused(_explain(str(tmp_path)), "not UTF-8 text (invalid byte at offset 23)")


@pytest.mark.parametrize("depth", [100, 100_000])
def test_deep_nesting(refused, tmp_path, depth):
    (tmp_path / "config.json").write_text('{"a": ' + "[" * depth + "]" * depth + "}")
    refused(_explain(str(tmp_path)), "nests deeper than 64 levels")


@pytest.mark.parametrize("path,field", [("x" * 5000, "too long"), ("/tmp/" + "y" * 300 + "/config.json", "too long"),
                                        ("Org/" + "n" * 300, "not found")])  # the HF cache name is too long: no hit
def test_paths_too_long(refused, path, field):
    refused(_explain(path), field)


def test_nul_in_path(refused):
    refused(_explain("/tmp/a\x00b"), "not a valid path")


@pytest.mark.parametrize("patch,field", [
    ({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "text_config": {"model_type": "llama"}},
     "unknown or non-hybrid architecture"),
    ({"architectures": "Qwen3_5ForConditionalGeneration"}, "`architectures`"),
    ({"text_config": [1, 2]}, "`text_config` must be an object"),
    ({"vision_config": {"depth": -1}}, "vision_config.depth"),
])
def test_root_fields(refused, tmp_path, patch, field):
    (tmp_path / "config.json").write_text(json.dumps({**bundled_config(), **patch}))
    refused(_explain(str(tmp_path)), field)


def test_layer_types_must_cover_the_layers(refused, tmp_path):
    from hybridplan.models.config_json import ConfigView
    from hybridplan.models.families.mamba import parse_lfm2
    from hybridplan.models.quant import quant_info

    cfg = {"model_type": "lfm2", "num_hidden_layers": 4, "hidden_size": 1024, "num_key_value_heads": 8,
           "num_attention_heads": 16, "layer_types": ["conv", "full_attention"]}
    with pytest.raises(BadInput, match="`layer_types` has 2 entries for 4 layers"):
        parse_lfm2(ConfigView(cfg, "x"), ConfigView(cfg, "x"), quant=quant_info(cfg, None), source="x")
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    refused(_explain(str(tmp_path)), "layer_types")


def test_kda_layer_numbers_must_lie_in_the_model(refused, tmp_path):
    cfg = bundled_config("moonshotai__Kimi-K3.json")
    lac = (cfg.get("text_config") or cfg)["linear_attn_config"]
    lac["kda_layers"] = lac["kda_layers"] + [4000]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    refused(_explain(str(tmp_path)), "kda_layers")


def test_loader_never_expands_tilde(monkeypatch, tmp_path):
    from hybridplan.models.loader import resolve_config

    (tmp_path / "config.json").write_text(json.dumps(bundled_config()))
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(BadInput, match="not expanded"):
        resolve_config("~/config.json")


def test_cli_expands_tilde_in_a_one_string_command(monkeypatch, tmp_path, cli_json):
    (tmp_path / "config.json").write_text(json.dumps(bundled_config()))
    monkeypatch.setenv("HOME", str(tmp_path))
    code, out = cli_json("explain", "--json", "--", "--model-path ~/config.json --tp-size 1")
    assert code == 0 and out["model"]["source"] == str(tmp_path / "config.json")
