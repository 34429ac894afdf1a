"""Geometry rules the engine conformance suite found drifting; expected values are sglang 0.5.23's own."""

from __future__ import annotations

import json

import pytest

from hybridplan.errors import BadInput
from hybridplan.models.loader import load_model
from tests.conftest import resolve_cmd


def test_nemotron_h_without_nextn_layers_has_the_config_class_default_zero():
    # configs/nemotron_h.py::NemotronHConfig(num_nextn_predict_layers=0); ModelConfig reads 0, not None
    assert load_model("nvidia/Nemotron-H-4B-Base-8K").num_nextn_predict_layers == 0
    assert load_model("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8").num_nextn_predict_layers == 1


def test_mamba2_without_intermediate_size_is_refused(tmp_path):
    # configs/mamba2.py::Mamba2Config.mamba2_cache_params reads self.intermediate_size (no transformers default)
    cfg = {"architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2", "hidden_size": 2560,
           "num_hidden_layers": 64, "expand": 2, "head_dim": 64, "num_heads": 80, "n_groups": 1, "state_size": 128}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(BadInput, match="intermediate_size"):
        load_model(str(tmp_path))
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "intermediate_size": 5120}))
    assert load_model(str(tmp_path)).mixer.intermediate_size == 5120


def test_modelopt_mixed_config_without_kv_metadata_reads_the_sidecar():
    # model_loader/weight_utils.py::get_quant_config: an incomplete modelopt_mixed quantization_config falls
    # through to hf_quant_config.json, which declares FP8 KV; the engine's cell at TP4 is 5120 B
    assert load_model("nvidia/Qwen3.6-35B-A3B-NVFP4").kv_cache_quant_algo == "FP8"
    args, geo, draft = resolve_cmd("python -m sglang.launch_server --model-path nvidia/Qwen3.6-35B-A3B-NVFP4 --tp 4")
    from hybridplan.engine.api import for_version

    assert args["kv_cache_torch_dtype"] == "float8_e4m3fn"
    assert for_version(args.version).kv_cell(args, geo, draft).total == 5120


@pytest.mark.parametrize("ref,layers,hidden", [
    ("moonshotai/Kimi-K3", 27, 1024),  # configs/kimi_k3.py::KimiK3VisionConfig aliases vt_num_hidden_layers, ...
    ("Qwen/Qwen3.8-27B", None, 1152),  # Qwen3VLVisionConfig names its depth `depth`: no num_hidden_layers attribute
    ("Qwen/Qwen3.5-35B-A3B", None, 1152),
])
def test_vision_tower_is_read_as_the_engines_config_class_exposes_it(ref, layers, hidden):
    # ModelConfig(...).hf_config.vision_config as sglang 0.5.23 loads the bundled config
    vision = load_model(ref).vision
    assert (vision.num_hidden_layers, vision.hidden_size) == (layers, hidden)


@pytest.mark.parametrize("ref", ["Qwen/Qwen3.8-2.4T-A95B", "Qwen/Qwen3-Next-80B-A3B-Instruct",
                                 "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"])
def test_text_only_configs_have_no_vision_tower(ref):
    assert load_model(ref).vision is None


@pytest.mark.parametrize("ref,vision,layers,hidden", [
    ("moonshotai/Kimi-K3", None, 27, 1024),  # KimiK3Config builds KimiK3VisionConfig() when config.json has none
    # the vt_* keys win over num_hidden_layers / hidden_size written beside them
    ("moonshotai/Kimi-K3", {"vt_num_hidden_layers": 60, "vt_hidden_size": 1536, "num_hidden_layers": 5,
                            "hidden_size": 7}, 60, 1536),
    ("Qwen/Qwen3.5-9B", None, None, 1152),  # Qwen3_5Config builds its default vision config
    ("Qwen/Qwen3.5-9B", {"hidden_size": None}, None, 1152),  # the class default hidden size
    ("Qwen/Qwen3.5-9B", {"num_hidden_layers": 12}, 12, 1152),
])
def test_vision_tower_class_defaults_and_aliases(tmp_path, ref, vision, layers, hidden):
    # each expected pair is what the engine's hf_config.vision_config held for the same config.json
    from hybridplan.models.loader import resolve_config

    config = dict(resolve_config(ref).config)
    if vision is None:
        config.pop("vision_config")
    else:
        merged = {**config["vision_config"], **vision}
        config["vision_config"] = {k: v for k, v in merged.items() if v is not None}
    (tmp_path / "config.json").write_text(json.dumps(config))
    tower = load_model(str(tmp_path)).vision
    assert (tower.num_hidden_layers, tower.hidden_size) == (layers, hidden)


@pytest.mark.parametrize("ref,quantization", [
    ("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", "modelopt_mixed"),
    ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", "modelopt_fp4"),
    ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", "modelopt_fp8"),
    ("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", None),
])
def test_checkpoint_quantization_is_the_engines_method(ref, quantization):
    # ModelConfig.quantization of sglang 0.5.23 (from hf_quant_config.json; none of these has a config.json block)
    geo = load_model(ref)
    assert geo.quantization == quantization and not geo.has_quantization_config


def test_lightning_geometry_loads_although_the_engine_refuses_every_launch():
    geo = load_model("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4")
    assert geo.family == "mamba2" and geo.linear_layer_ids and geo.full_attention_layer_ids


@pytest.mark.parametrize("sidecar,block,quantization", [
    ({"quant_algo": "MIXED_PRECISION", "quantized_layers": {"a": {"quant_algo": "FP8"}}}, False, "w4afp8"),
    ({"quant_algo": "NVFP4", "group_size": 16}, False, "modelopt_fp4"),
    ({"quant_algo": "MIXED_PRECISION", "quantized_layers": {"a": {"quant_algo": "W4A16_NVFP4"}}}, True,
     "modelopt_mixed"),
])
def test_checkpoint_quantization_of_reshaped_sidecars(tmp_path, sidecar, block, quantization):
    # configs/model_config.py::_parse_modelopt_quant_config, as the engine resolved each shape
    from hybridplan.models.loader import resolve_config

    config = dict(resolve_config("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4").config)
    if block:
        config["quantization_config"] = {**sidecar, "quant_method": "modelopt"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    sidecar = {"quantization": {**sidecar, "kv_cache_quant_algo": "FP8"}}
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(sidecar))
    geo = load_model(str(tmp_path))
    assert (geo.quantization, geo.has_quantization_config) == (quantization, block)
