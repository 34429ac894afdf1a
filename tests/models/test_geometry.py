"""Geometry from real config.json files: worked numbers from the engine spec and boot logs."""

from __future__ import annotations

import json

import pytest

from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.models.loader import load_model, parse_geometry, resolve_config, ConfigSource


def test_qwen38_27b_state_slot_tp1():
    geo = load_model("Qwen/Qwen3.8-27B")
    assert len(geo.linear_layer_ids) == 48 and len(geo.full_attention_layer_ids) == 16
    assert geo.state_bytes_per_slot(1, "float32") == 153_944_064
    shape = geo.state_shape(1)
    assert shape.conv == ((10240, 3),) and shape.temporal == (48, 128, 128)
    ssm_part = 48 * shape.temporal_numel * 4
    assert ssm_part == 150_994_944
    # a 191-slot pool allocates 192 rows: 27.00 GiB of SSM state (the docs' boot-log check)
    assert f"{192 * ssm_part / 2**30:.2f}" == "27.00"
    assert geo.state_bytes_per_slot(1, "bfloat16") == 78_446_592


@pytest.mark.parametrize("tp,per_slot", [(1, 153_944_064), (2, 76_972_032), (4, 38_486_016), (8, 19_243_008)])
def test_qwen38_27b_state_slot_by_tp(tp, per_slot):
    assert load_model("Qwen/Qwen3.8-27B").state_bytes_per_slot(tp, "float32") == per_slot


@pytest.mark.parametrize("tp,kv_dtype,cell", [(1, "bfloat16", 65_536), (1, "float8_e4m3fn", 32_768),
                                              (2, "bfloat16", 32_768), (4, "bfloat16", 16_384), (8, "bfloat16", 16_384)])
def test_qwen38_27b_kv_cell(tp, kv_dtype, cell):
    assert load_model("Qwen/Qwen3.8-27B").kv_bytes_per_token(tp, kv_dtype) == cell


def test_tp32_refused_like_the_engine():
    with pytest.raises(EngineRefusal, match="48 is not divisible by 32"):
        load_model("Qwen/Qwen3.8-27B").state_bytes_per_slot(32, "float32")


@pytest.mark.parametrize("tp,per_slot,cell", [(1, 77_266_944, 24_576), (4, 19_316_736, 12_288), (8, 9_658_368, 12_288)])
def test_qwen3_next(tp, per_slot, cell):
    geo = load_model("Qwen/Qwen3-Next-80B-A3B-Thinking")
    assert (len(geo.linear_layer_ids), len(geo.full_attention_layer_ids)) == (36, 12)
    assert geo.state_bytes_per_slot(tp, "float32") == per_slot
    assert geo.kv_bytes_per_token(tp, "bfloat16") == cell
    assert geo.config_ssm_dtype is None


def test_kimi_linear_kda_and_mla():
    geo = load_model("moonshotai/Kimi-Linear-48B-A3B-Instruct")
    assert geo.full_attention_layer_ids == (3, 7, 11, 15, 19, 23, 26)
    assert geo.state_shape(1).conv == ((3, 12288),)
    assert geo.state_bytes_per_slot(1, "float32") == 43_417_600
    assert geo.state_bytes_per_slot(4, "float32") == 10_854_400
    assert geo.kv_bytes_per_token(1, "bfloat16") == 8_064
    assert geo.kv_bytes_per_token(8, "float8_e4m3fn") == 4_032  # MLA is not divided by TP
    assert geo.config_ssm_dtype is None  # KDA reads the SSM dtype from env/flag only


def test_kimi_k3_wrapper():
    geo = load_model("moonshotai/Kimi-K3")
    assert (len(geo.linear_layer_ids), len(geo.full_attention_layer_ids)) == (69, 24)
    assert geo.state_bytes_per_slot(8, "float32") == 56_171_520
    assert geo.kv_bytes_per_token(8, "bfloat16") == 27_648
    assert geo.is_multimodal


def test_nemotron_nano_9b_v2():
    geo = load_model("nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    assert (len(geo.linear_layer_ids), len(geo.full_attention_layer_ids)) == (27, 4)
    assert geo.state_shape(1).conv == ((12288, 3),)
    assert geo.state_bytes_per_slot(1, "float32") == 143_548_416
    assert geo.kv_bytes_per_token(1, "bfloat16") == 16_384


def _geo_from(cfg: dict, name="test"):
    return parse_geometry(ConfigSource(ref=name, config=cfg, hf_quant_config=None, origin=name, checkpoint_dir=None))


def test_falcon_h1_every_layer_is_both_and_ngroups_extension():
    cfg = {"architectures": ["FalconH1ForCausalLM"], "model_type": "falcon_h1", "num_hidden_layers": 24,
           "hidden_size": 2048, "mamba_d_ssm": 3072, "mamba_n_heads": 48, "mamba_d_head": 64, "mamba_n_groups": 1,
           "mamba_d_state": 256, "mamba_d_conv": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
           "head_dim": 128}
    geo = _geo_from(cfg)
    assert geo.linear_layer_ids == geo.full_attention_layer_ids == tuple(range(24))
    assert geo.state_shape(1).conv == ((3584, 3),)
    assert geo.state_bytes_per_slot(1, "float32") == 76_013_568
    assert geo.state_shape(2).conv == ((2048, 3),)  # n_groups 1 -> 2 at TP2
    assert geo.state_bytes_per_slot(2, "float32") == 38_043_648
    assert geo.kv_bytes_per_token(1, "bfloat16") == 24_576


def test_mamba1_and_mamba2_have_no_kv():
    m1 = _geo_from({"architectures": ["MambaForCausalLM"], "model_type": "mamba", "num_hidden_layers": 64,
                    "hidden_size": 2560, "intermediate_size": 5120, "state_size": 16, "conv_kernel": 4})
    assert m1.state_bytes_per_slot(1, "float32") == 22_937_600
    assert m1.kv_bytes_per_token(1, "bfloat16") == 0
    m2 = _geo_from({"architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2", "num_hidden_layers": 64,
                    "hidden_size": 4096, "intermediate_size": 8192, "n_groups": 8, "num_heads": 128, "head_dim": 64,
                    "state_size": 128, "conv_kernel": 4})
    assert m2.state_bytes_per_slot(1, "float32") == 272_367_616


def test_qwen35_quant_kv_from_sidecar_and_config():
    assert load_model("nvidia/Qwen3.6-27B-NVFP4").kv_cache_quant_algo == "FP8"  # kv_cache_scheme float/8
    assert load_model("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8").kv_cache_quant_algo == "FP8"  # hf_quant_config
    assert load_model("Qwen/Qwen3.5-122B-A10B-FP8").kv_cache_quant_algo is None  # fp8 block, no KV scheme


def test_local_directory_with_infinity(tmp_path):
    src = (resolve_config("nvidia/Nemotron-H-47B-Base-8K"))
    from hybridplan.models.catalog import read_text

    text = read_text("nvidia__Nemotron-H-47B-Base-8K.json")
    assert "Infinity" in text
    (tmp_path / "config.json").write_text(text)
    geo = load_model(str(tmp_path))
    assert geo.state_bytes_per_slot(1, "float32") == load_model("nvidia/Nemotron-H-47B-Base-8K").state_bytes_per_slot(1, "float32")
    assert src.entry is not None


@pytest.mark.parametrize("text,match", [
    ("{not json", "malformed config.json"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}), "unknown or non-hybrid architecture"),
    (json.dumps({"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "num_hidden_layers": 8}),
     "neither .*full_attention_interval"),
    (json.dumps({"architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear", "num_hidden_layers": 4,
                 "linear_attn_config": {"kda_layers": "x"}}), "kda_layers"),
])
def test_bad_configs_are_one_line_errors(tmp_path, text, match):
    (tmp_path / "config.json").write_text(text)
    with pytest.raises(BadInput, match=match) as exc:
        load_model(str(tmp_path / "config.json"))
    assert "\n" not in exc.value.message


def test_every_bundled_config_loads():
    from hybridplan.models.catalog import catalog
    from hybridplan.models.loader import load_draft

    for hf_id, entry in catalog().items():
        if "SpecForge" in entry.config_file:
            assert load_draft(hf_id).num_hidden_layers > 0
        else:
            geo = load_model(hf_id)
            assert geo.linear_layer_ids and geo.state_bytes_per_slot(1, "float32") > 0
