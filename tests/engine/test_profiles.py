"""Build profiles (engine/sglang/behaviours.py PROFILES): a dev build between releases is modelled as a release's switches
and flags with the overrides its own measurements show, never silently as the newest release."""

from __future__ import annotations

import pytest

from hybridplan.engine.api import for_version
from hybridplan.engine.sglang.behaviours import (PROFILES, SWITCH_NAMES, VERSIONS, base_release, check_version, profile,
                                          switches)
from hybridplan.errors import BadInput, EngineRefusal
from hybridplan.hardware.catalog import lookup
from hybridplan.engine.sglang.serving.loading import load

QWEN_5090 = ("python -m sglang.launch_server --model-path RadixArk/Qwen3.8-27B-NVFP4 --kv-cache-dtype fp8_e4m3 "
             "--attention-backend flashinfer --max-running-requests 1 --mamba-ssm-dtype bfloat16")
DSPARK = (" --speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark "
          "--speculative-draft-attention-backend flashinfer")


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: p.name)
def test_a_profile_is_its_base_release_but_for_its_overrides(p):
    sw, base = switches(p.name), switches(p.base)
    changed = {o.switch for o in p.overrides}
    assert sw.version == p.name and p.name not in VERSIONS and base_release(p.name) == p.base
    assert {n for n in SWITCH_NAMES if getattr(sw, n) != getattr(base, n)} == changed
    assert all(getattr(sw, o.switch) == o.value and o.evidence for o in p.overrides)
    assert for_version(p.name).registry().by_dest.keys() == for_version(p.base).registry().by_dest.keys()


def test_a_profile_parses_with_its_base_release_flags():
    # --enable-lean-attention came with 0.5.19: the 0.5.18-based profile refuses it, as 0.5.18 does
    cmd = QWEN_5090 + " --enable-lean-attention"
    with pytest.raises(BadInput, match="--enable-lean-attention"):
        load(cmd, version="1cf2b8c")
    assert load(cmd, version="0.5.19").version == "0.5.19"


def test_an_unknown_version_names_the_releases_and_the_profiles():
    assert check_version("1cf2b8c") == "1cf2b8c" and profile("0.5.18") is None
    with pytest.raises(BadInput, match=r"supported: 0\.5\.18.*build profiles: 1cf2b8c"):
        check_version("0.5.17")


def test_1cf2b8c_has_the_defaults_its_records_show():
    """The page's measured notes on 1cf2b8c: the RTX 5090's default prefill chunk is 2048 ("a prefill chunk smaller
    than the engine default: at 0.91 the pools fit but a 2048-token chunk's activations do not"); the default decode
    graph set is not capped by --max-running-requests 1 ("--cuda-graph-max-bs-decode 1 also protects the token pool");
    the nested DSpark draft config loads (the DSPARK pins served). 0.5.23 differs on the first two, 0.5.18 on the
    third, so neither release is the build."""
    gpu = lookup("rtx5090").platform()
    build, newest = load(QWEN_5090, platform=gpu, version="1cf2b8c"), load(QWEN_5090, platform=gpu, version="0.5.23")
    assert (build.args["chunked_prefill_size"], build.args["cuda_graph_decode_max_bs"]) == (2048, 24)
    assert (newest.args["chunked_prefill_size"], newest.args["cuda_graph_decode_max_bs"]) == (4096, 1)
    spark = load(QWEN_5090 + DSPARK, platform=gpu, version="1cf2b8c")
    assert for_version("1cf2b8c").kv_cell(spark.args, spark.geometry, spark.draft).draft == 10_240
    old = load(QWEN_5090 + DSPARK, platform=gpu, version="0.5.18")
    with pytest.raises(EngineRefusal, match="markov_rank"):
        for_version("0.5.18").kv_cell(old.args, old.geometry, old.draft)


def test_561c8f3_loads_the_dspark_draft_its_users_ran_on_gb10():
    """The first Qwen3.8 image (g561c8f3) served RadixArk/Qwen3.8-27B-DSpark on a DGX Spark (MiaAI-Lab's
    start-dspark.sh): its nested draft config loads there as on 1cf2b8c, and its defaults are 0.5.18's."""
    gpu = lookup("dgx-spark").platform()
    spark = load(QWEN_5090 + DSPARK, platform=gpu, version="561c8f3")
    assert for_version("561c8f3").kv_cell(spark.args, spark.geometry, spark.draft).draft == 10_240
    assert all(getattr(switches("561c8f3"), n) == getattr(switches("1cf2b8c"), n) for n in SWITCH_NAMES)

