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
    from hybridplan.engine.sglang_0_5_23.sizing import kv_cell

    assert args["kv_cache_torch_dtype"] == "float8_e4m3fn"
    assert kv_cell(args, geo, draft).total == 5120
