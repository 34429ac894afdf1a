"""The config-based estimate against real totals: header totals in the catalog and the cookbook's measured weights."""

from __future__ import annotations

import pytest

from hybridplan.models.loader import resolve_config
from hybridplan.weights.estimate import estimate
from hybridplan.weights.quant import NAMED, QuantPolicy, policy_from_config, scheme_bytes
from tests.conftest import resolve_cmd

GIB = 1 << 30


def inv(ref: str, family: str = "gdn", policy: QuantPolicy | None = None):
    src = resolve_config(ref)
    _, geo, _ = resolve_cmd(f"--model-path {ref}") if family != "draft" else (None, None, None)
    full = geo.full_attention_layer_ids if geo is not None else ()
    return estimate(src.config, family, full, policy or policy_from_config(src.config, src.hf_quant_config))


def runtime_gib(ref: str, policy: QuantPolicy | None = None) -> float:
    return inv(ref, policy=policy).total(("target", "vision")) / GIB


def test_bf16_estimate_matches_the_checkpoint_index_total():
    # catalog total_size of Qwen3.6/3.8-27B (the same geometry as Qwen3.5-27B): 55,562,855,904 B
    assert inv("Qwen/Qwen3.5-27B").total() == pytest.approx(55_562_855_904, rel=1e-6)


def test_kda_estimate_matches_the_kimi_linear_tensor_table():
    # bf16 params plus fp32 A_log / dt_bias, as derived from the checkpoint's tensor table
    assert inv("moonshotai/Kimi-Linear-48B-A3B-Instruct", "kda").total() == 98_245_528_576


@pytest.mark.parametrize("ref,measured_gib", [
    ("Qwen/Qwen3.8-27B-FP8", 28.5),  # cookbook: FP8 ~28.5 GB (the engine's GB = GiB)
    ("RadixArk/Qwen3.8-27B-NVFP4", 16.5),  # NVFP4 with the FP4 lm_head ~16.5 GB
])
def test_runtime_weights_cross_check_the_cookbook(ref, measured_gib):
    assert runtime_gib(ref) == pytest.approx(measured_gib, rel=0.03)


def test_bf16_checkpoint_and_the_dense_head_delta():
    assert inv("Qwen/Qwen3.8-27B").total() / GIB == pytest.approx(52, rel=0.01)  # "52 GB, 18 shards"
    delta = runtime_gib("RadixArk/Qwen3.8-27B-NVFP4-BF16-LMHead") - runtime_gib("RadixArk/Qwen3.8-27B-NVFP4")
    assert delta == pytest.approx(1.7, rel=0.1)  # "dense head +~1.7 GB on disk"


def test_per_layer_mixed_precision_list_is_followed():
    # nvidia/Qwen3.6-27B-NVFP4: FP8 attention, NVFP4 MLP and lm_head; the docs record 21.9 GB for the export
    assert inv("nvidia/Qwen3.6-27B-NVFP4").total() / 1e9 == pytest.approx(21.9, rel=0.01)


def test_named_policies_order_the_sizes():
    sizes = [runtime_gib("Qwen/Qwen3.8-27B", NAMED[q]) for q in ("bf16", "fp8", "nvfp4-bf16-head", "nvfp4")]
    assert sizes == sorted(sizes, reverse=True)


def test_scheme_bytes():
    assert scheme_bytes("bf16", 128, 256) == 65_536
    assert scheme_bytes("fp8_block", 129, 256) == 129 * 256 + 2 * 2 * 4
    assert scheme_bytes("nvfp4", 16, 16) == 128 + 16 + 8
    assert scheme_bytes("mxfp4", 32, 32) == 512 + 32


def test_policies_from_configs():
    fp8 = policy_from_config({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128],
                                                      "modules_to_not_convert": ["lm_head", "model.visual"]}}, None)
    assert fp8.scheme("model.layers.0.mlp.up_proj", "linear") == "fp8_block"
    assert fp8.scheme("model.visual.blocks.0.attn.qkv", "linear") == "bf16"
    assert fp8.scheme("lm_head", "lm_head") == "bf16"
    ct = policy_from_config({"text_config": {"quantization_config": {
        "quant_method": "compressed-tensors", "ignore": ["re:.*self_attn.*"],
        "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "group_size": 32}}}}}}, None)
    assert ct.scheme("m.layers.3.mlp.experts.up_proj", "expert") == "mxfp4"
    assert ct.scheme("m.layers.3.self_attn.q_proj", "linear") == "bf16"
    nv = policy_from_config({}, {"quantization": {"quant_algo": "NVFP4", "exclude_modules": ["lm_head"]}})
    assert nv.scheme("lm_head", "lm_head") == "bf16" and nv.scheme("x.mlp.up_proj", "linear") == "nvfp4"
    assert policy_from_config({}, None).scheme("x.mlp.up_proj", "linear") == "bf16"


def test_draft_checkpoints():
    dspark = inv("RadixArk/Qwen3.8-27B-DSpark", "draft").total()
    dflash = inv("incoai/Qwen3.8-27B-DFlash2", "draft").total()
    # five Qwen3-style layers (32 Q / 8 KV heads x 128, MLP 17,408) and the 5 x 5120 -> 5120 context projection
    layer = 2 * (5120 * 4096 * 2 + 5120 * 1024 * 2 + 3 * 5120 * 17408)
    assert dflash == pytest.approx(5 * layer + 2 * 5 * 5120 * 5120, rel=0.001)
    assert dspark > dflash  # the markov head
