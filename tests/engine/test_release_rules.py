"""Per-release rules the conformance suite cannot see (HIP platforms, the MLA prefill graph, raw ring bytes): each
release's switch, as its source reads, drives hybridplan's model of that release."""

from __future__ import annotations

import json

import pytest

from hybridplan.conformance.sglang.fixtures import SYNTHETIC
from hybridplan.engine.api import for_version
from hybridplan.engine.sglang.args import Platform
from hybridplan.errors import EngineRefusal
from hybridplan.hardware.catalog import lookup
from hybridplan.engine.sglang.serving.loading import load
from hybridplan.models.loader import load_draft

QWEN_FP8 = "--model-path Qwen/Qwen3.8-27B-FP8 "
KIMI = "--model-path moonshotai/Kimi-Linear-48B-A3B-Instruct "
H200 = Platform(device="cuda", sm=90, gpu_memory_mib=143771)
B200 = Platform(device="cuda", sm=100, gpu_memory_mib=183359)


@pytest.mark.parametrize("version, mfs", [("0.5.18", pytest.approx(0.68)), ("0.5.19", 0.8), ("0.5.23", 0.8)])
def test_aiter_honor_env_exists_from_0_5_19(version, mfs):
    """0.5.18's server_args.py::_handle_attention_backend_compatibility scales every fraction by 0.85 on aiter; the
    SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION escape arrives in 0.5.19's attention_hook.py."""
    hip = lookup("mi355x").platform()
    args = load("SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION=1 " + QWEN_FP8 + "--mem-fraction-static 0.8", platform=hip,
                version=version).args
    assert args["attention_backend"] == "aiter"
    assert args["mem_fraction_static"] == mfs


@pytest.mark.parametrize("version, platform, max_bs", [
    ("0.5.22", H200, 2048), ("0.5.22", B200, 2048),  # memory_hook.py: MLA prefill graph max_bs = 2048
    ("0.5.23", H200, 8192), ("0.5.23", B200, 8192),  # min(8192, chunked_prefill_size) (8192 on H200, 16384 on B200)
])
def test_mla_prefill_graph_max_bs_per_release(version, platform, max_bs):
    args = load(KIMI + "--tp-size 4", platform=platform, version=version).args
    assert args["cuda_graph_prefill_max_bs"] == max_bs
    assert max(args["cuda_graph_prefill_bs"]) == max_bs


@pytest.mark.parametrize("version, backend", [("0.5.18", "breakable"), ("0.5.19", "breakable"),
                                              ("0.5.20", "disabled"), ("0.5.23", "disabled")])
def test_kda_breakable_prefill_graph_from_0_5_20(version, backend):
    args = load(KIMI + "--tp-size 4", platform=H200, version=version).args
    assert args["cuda_graph_prefill_backend"] == backend


@pytest.mark.parametrize("version, ring", [("0.5.19", 2614272), ("0.5.20", 5122560)])
def test_gdn_ring_bytes_raw_before_0_5_20(version, ring):
    """configs/mamba_utils.py::replayssm_ring_bytes_per_req of Qwen3.8-2.4T at TP 8, record_len 8, bf16 conv: the
    engine's own numbers (the conformance driver's release-text-qwen35-auto scenario)."""
    loaded = load("--model-path Qwen/Qwen3.8-2.4T-A95B --tp-size 8", platform=H200, version=version)
    assert for_version(version).replayssm_ring_bytes(loaded.args, loaded.geometry, 8) == ring


def test_nested_markov_rank_is_read_from_0_5_23():
    """The published DSpark drafts nest markov_rank under dflash_config; 0.5.22's _get_dspark_config reads only
    dspark_config, so the draft has rank 0 there and spec_aux_hidden_state.py refuses it."""
    draft = load_draft("SpecForge/qwen3.6-27b-dspark")
    assert (draft.markov_rank, draft.markov_rank_dspark_config_only) == (256, 0)
    cmd = "--model-path Qwen/Qwen3.6-27B --speculative-algorithm DSPARK --speculative-draft-model-path " \
          "SpecForge/qwen3.6-27b-dspark"
    for version, refused in (("0.5.22", True), ("0.5.23", False)):
        loaded = load(cmd, platform=H200, version=version)
        engine = for_version(version)
        if refused:
            with pytest.raises(EngineRefusal, match=r"markov_rank > 0 in the draft config, got markov_rank=0"):
                engine.kv_cell(loaded.args, loaded.geometry, loaded.draft)
        else:
            assert engine.kv_cell(loaded.args, loaded.geometry, loaded.draft).draft > 0


def test_pure_ssm_configs_load_from_0_5_20(tmp_path):
    """ModelConfig._derive_model_shapes read num_attention_heads unconditionally before 0.5.20."""
    (tmp_path / "config.json").write_text(json.dumps(SYNTHETIC["synthetic/mamba2-2.7b"]))
    cmd = f"--model-path {tmp_path}"
    with pytest.raises(EngineRefusal, match=r"^'Mamba2Config' object has no attribute 'num_attention_heads'$"):
        load(cmd, platform=H200, version="0.5.19")
    args = load(cmd, platform=H200, version="0.5.20").args
    assert args["uses_mamba_radix_cache"] is False and args["mem_fraction_static"] is not None
