"""Rules the engine conformance suite found drifting; each expected value is what sglang 0.5.23 itself computed."""

from __future__ import annotations

import json

import pytest

from hybridplan.engine.sglang.args import Platform
from hybridplan.errors import EngineRefusal
from tests.conftest import resolve_cmd

H200 = Platform(device="cuda", sm=90, gpu_memory_mib=143771)
NEMO_4B = "python -m sglang.launch_server --model-path nvidia/Nemotron-H-4B-Base-8K"


def test_context_length_above_the_derived_one_is_refused_with_the_engines_message():
    # configs/model_config.py::ModelConfig._derive_context_length (the config derives 8192)
    with pytest.raises(EngineRefusal) as exc:
        resolve_cmd(f"{NEMO_4B} --context-length 32768")
    assert exc.value.kind == "ValueError"
    assert exc.value.message.startswith("Warning: User-specified context_length (32768) is greater than the derived "
                                        "context_length (8192).")
    assert exc.value.message.endswith("set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1")


@pytest.mark.parametrize("env", ["SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1", "SGLANG_IS_IN_CI=true"])
def test_context_length_override_is_allowed_by_the_engines_env_switches(env):
    args, _, _ = resolve_cmd(f"{env} {NEMO_4B} --context-length 32768")
    assert args["context_length"] == 32768


def test_a_shorter_context_length_is_kept():
    args, _, _ = resolve_cmd(f"{NEMO_4B} --context-length 4096")
    assert args["context_length"] == 4096


def test_attention_dp_divides_the_chunked_prefill_size_per_rank():
    # parallel_hook.py::handle_data_parallelism: the engine holds 8192 // 2 on an H200 at TP4 DP2
    args, _, _ = resolve_cmd("python -m sglang.launch_server --model-path Qwen/Qwen3.5-35B-A3B --tp 4 "
                             "--enable-dp-attention --dp 2", platform=H200)
    assert args["chunked_prefill_size"] == 4096
    plain, _, _ = resolve_cmd("python -m sglang.launch_server --model-path Qwen/Qwen3.5-35B-A3B --tp 4", platform=H200)
    assert plain["chunked_prefill_size"] == 8192


def _gpu(mib: int) -> Platform:
    """The conformance oracle's stand-in: an sm90 card of `mib` MiB."""
    return Platform(device="cuda", sm=90, gpu_memory_mib=mib)


LAUNCH = "python -m sglang.launch_server --model-path"
K3_DP = (f"{LAUNCH} moonshotai/Kimi-K3 --tp-size 8 --enable-dp-attention --dp 2 --mamba-radix-cache-strategy no_buffer "
         "--disable-overlap-schedule --kv-cache-dtype fp8_e4m3 --speculative-algorithm NEXTN --speculative-num-steps 3 "
         "--speculative-eagle-topk 4 --speculative-num-draft-tokens 4 --max-running-requests 1024 "
         "--max-mamba-cache-size 200 --mamba-full-memory-ratio 4.0")


def test_kimi_k3_default_mem_fraction_takes_the_vlm_factor_of_its_aliased_vit():
    # conformance s0-0094: memory_hook.py::adjust_mem_fraction_for_vlm reads KimiK3VisionConfig.num_hidden_layers,
    # an alias of vt_num_hidden_layers (27): 0.865 x 0.95 x (1 - 0.1 x (27/24 - 1))
    args, _, _ = resolve_cmd(K3_DP, platform=H200)
    assert args["mem_fraction_static"] == 0.8114781249999999
    assert "adjust_mem_fraction_for_vlm" in args.arg("mem_fraction_static").rule
    assert args["chunked_prefill_size"] == 4096  # the reserve used 8192: the DP split runs after the default


@pytest.mark.parametrize("command,mib,mfs,chunk", [
    (f"{LAUNCH} moonshotai/Kimi-K3 --tp-size 8", 143771, 0.841498125, 8192),
    (f"{LAUNCH} moonshotai/Kimi-K3 --tp-size 8 --enable-dp-attention --dp 4", 81559, 0.6613781249999999, 2048),
    (f"{LAUNCH} moonshotai/Kimi-K3 --tp-size 8 --enable-dp-attention --dp 8", 183359, 0.704531875, 2048),
    (f"{LAUNCH} Qwen/Qwen3.5-9B", 143771, 0.835063359375, 8192),
    (f"{LAUNCH} Qwen/Qwen3.5-35B-A3B --tp-size 4 --enable-dp-attention --dp 2", 143771, 0.7999222656249999, 4096),
    (f"{LAUNCH} Qwen/Qwen3.5-35B-A3B --tp-size 4 --enable-dp-attention --dp 2", 46068, 0.747210625, 2048),
    (f"{LAUNCH} Qwen/Qwen3-Next-80B-A3B-Instruct --tp-size 4 --enable-dp-attention --dp 2", 143771, 0.865, 4096),
    (f"{LAUNCH} Qwen/Qwen3-Next-80B-A3B-Instruct --tp-size 8", 24564, 0.658, 4096),
    (f"{LAUNCH} Qwen/Qwen3-Next-80B-A3B-Instruct --tp-size 8", 15360, 0.677, 2048),
    (f"{LAUNCH} nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", 143771, 0.903, 8192),
])
def test_default_mem_fraction_by_gpu_attention_dp_and_modality(command, mib, mfs, chunk):
    # sglang 0.5.23 on the oracle's stand-in sm90 card of `mib` MiB
    args, _, _ = resolve_cmd(command, platform=_gpu(mib))
    assert args["mem_fraction_static"] == mfs
    assert args["chunked_prefill_size"] == chunk


def _derived(tmp_path, ref: str, vision: dict | None) -> str:
    """A bundled config with its vision_config replaced (None: removed), as a checkpoint directory."""
    from hybridplan.models.loader import resolve_config

    config = dict(resolve_config(ref).config)
    if vision is None:
        config.pop("vision_config")
    else:
        config["vision_config"] = {**config["vision_config"], **vision}
    (tmp_path / "config.json").write_text(json.dumps(config))
    return str(tmp_path)


@pytest.mark.parametrize("ref,vision,flags,mfs", [
    # KimiK3Config builds its default vision config (27 x 1024) when config.json has none
    ("moonshotai/Kimi-K3", None, "--tp-size 8", 0.841498125),
    # a ViT 4.5x the ViT-L/14 baseline: the factor clamps at 0.95 x 0.8
    ("Qwen/Qwen3.5-9B", {"num_hidden_layers": 48, "hidden_size": 1536}, "", 0.68628),
    # Qwen3_5Config builds Qwen3VLVisionConfig (no num_hidden_layers, hidden 1152) when config.json has none
    ("Qwen/Qwen3.5-9B", None, "", 0.835063359375),
])
def test_vlm_factor_reads_the_vision_config_the_config_class_builds(tmp_path, ref, vision, flags, mfs):
    args, _, _ = resolve_cmd(f"{LAUNCH} {_derived(tmp_path, ref, vision)} {flags}", platform=H200)
    assert args["mem_fraction_static"] == mfs


LIGHTNING = "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4"
HF_CONFIG_CRASH = "'NemotronHConfig' object has no attribute 'quantization_config'"


@pytest.mark.parametrize("flags", ["", "--tp-size 2 --pp-size 2 --mamba-radix-cache-strategy extra_buffer",
                                   "--page-size 16 --mamba-radix-cache-strategy no_buffer"])
def test_lightning_nvfp4_is_refused_with_the_engines_crash(flags):
    # arg_groups/model_overrides/nemotron_h.py::_nemotron_h_overrides reads hf_config.quantization_config for a
    # modelopt_mixed checkpoint; this one declares MIXED_PRECISION only in hf_quant_config.json. The engine raises
    # before it validates the radix strategy (NemotronH reaches that later), whatever the flags.
    with pytest.raises(EngineRefusal) as exc:
        resolve_cmd(f"{LAUNCH} {LIGHTNING} {flags}", platform=H200)
    assert (exc.value.kind, exc.value.message) == ("AttributeError", HF_CONFIG_CRASH)
    assert exc.value.rule == "arg_groups/model_overrides/nemotron_h.py::_nemotron_h_overrides"


def test_lightning_refusal_exits_3_and_the_catalog_still_lists_it(cli):
    code, _, err = cli("explain", "--", *f"{LAUNCH} {LIGHTNING}".split())
    assert code == 3 and HF_CONFIG_CRASH in err
    code, out, _ = cli("models")
    assert code == 0 and LIGHTNING in out


def _nemotron_variant(tmp_path, *, root_block: bool = False, sidecar: dict | None = None) -> str:
    from hybridplan.models.loader import resolve_config

    src = resolve_config(LIGHTNING)
    config, quant = dict(src.config), sidecar or src.hf_quant_config
    if root_block:
        config["quantization_config"] = {**quant["quantization"], "quant_method": "modelopt"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(quant))
    return str(tmp_path)


@pytest.mark.parametrize("variant", [
    {"root_block": True},  # config.json carries the block: hf_config.quantization_config exists
    {"sidecar": {"quantization": {"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": "FP8",
                                  "quantized_layers": {"backbone.layers.0.mixer.in_proj": {"quant_algo": "FP8"}}}}},
    {"sidecar": {"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16}}},
])
def test_nemotron_checkpoints_that_do_not_reach_the_crash_resolve(tmp_path, variant):
    # sglang 0.5.23 resolves all three: the block is present, the mixed map has no NVFP4 layer (w4afp8, not ModelOpt),
    # or the sidecar names plain NVFP4 (modelopt_fp4 is not re-read from hf_config)
    args, _, _ = resolve_cmd(f"{LAUNCH} {_nemotron_variant(tmp_path, **variant)}", platform=H200)
    assert args["mem_fraction_static"] == 0.903
