"""`logs check` models the release the log is from: the version a log states, its modelled release, the precedence."""

from __future__ import annotations

import json

import pytest

from hybridplan.engine.api import DEFAULT
from hybridplan.engine.sglang.command import parse_command
from hybridplan.errors import BadInput
from hybridplan.engine.sglang.serving.loading import load
from hybridplan.engine.sglang.serving.logcheck import EngineView, check_log
from hybridplan.engine.api import release_of
from hybridplan.engine.sglang.log_version import choose, stated, stated_in_log
from hybridplan.engine.sglang.logparse import parse_log
from hybridplan.calibration.public_logs import load as public_logs
from tests.conftest import FIXTURES

LOGS = FIXTURES / "logs"
ASK = f"the log does not say its sglang version; modelled as {DEFAULT}; pass --log-version"


@pytest.mark.parametrize("line, version", [
    ("sglang: 0.5.8.post1", "0.5.8.post1"),  # python -m sglang.check_env
    ("sglang version: 0.5.23", "0.5.23"),  # `sglang version`
    ("docker run --gpus all lmsysorg/sglang:v0.5.19 python3 -m sglang.launch_server", "0.5.19"),
    ("image: lmsysorg/sglang-rocm:v0.5.17-rocm720-mi35x-20260819", "0.5.17"),
    ('pip install "sglang[all]"==0.3.0', "0.3.0"),
    ("uv pip install sglang==0.5.21", "0.5.21"),
    ("Successfully pinned sglang == 0.5.20rc1", "0.5.20rc1"),
])
def test_each_form_a_log_states_its_version_in(line, version):
    assert stated_in_log(["[2026-09-14 10:00:00] Load weight begin. avail mem=22.93 GB", line]) == version


def test_pip_show_gives_the_version_on_the_line_after_the_name():
    assert stated_in_log(["Name: sglang", "Version: 0.0.0.dev1+gdce8b0606", "Summary: ..."]) == "0.0.0.dev1+gdce8b0606"
    assert stated_in_log(["Name: torch", "Version: 2.9.1"]) is None


@pytest.mark.parametrize("line", [
    "Version: 0.5.19",  # not after `Name: sglang`
    "sglang is using nccl==2.27.3",
    "lmsysorg/sglang:dev-cu12-qwen38-next-local",
    "[2026-04-14 16:08:44 TP0] Load weight end. elapsed=5.54 s, avail mem=14.08 GB, mem usage=8.85 GB.",
    "flashinfer_python: 0.5.19",
])
def test_lines_that_name_no_sglang_version(line):
    assert stated_in_log([line]) is None


@pytest.mark.parametrize("version, release, why", [
    ("0.5.19", "0.5.19", "modelled"),
    ("0.5.23.post2", "0.5.23", "modelled"),
    ("0.5.20rc1", "0.5.20", "modelled"),
    ("0.5.18", "0.5.18", "modelled"),
    ("v0.5.21", "0.5.21", "modelled"),
    ("0.5.19-cu129", None, "names no sglang release"),
    ("0.0.0.dev11582+g4df60434d", None, "dev/source build"),
    ("0.5.6.post3.dev1154+ge2c8a50b", None, "dev/source build"),
    ("0.5.22+cu129", None, "dev/source build"),
    ("0.5.17", None, "predates the modelled range 0.5.18-0.5.23"),
    ("0.4.8.post1", None, "predates"),
    ("0.5.24", None, "newer than the modelled range"),
    ("0.6.0", None, "newer than the modelled range"),
    ("7c9697178ed3", None, "names no sglang release"),
])
def test_a_stated_version_maps_to_a_modelled_release_or_says_why_not(version, release, why):
    got, reason = release_of(version)
    assert got == release and why in reason


def test_precedence_engine_version_then_log_version_then_the_log_then_the_default():
    assert choose(engine_version="0.5.21", log_version="0.5.19", in_log="0.5.20").version == "0.5.21"
    c = choose(engine_version=None, log_version="0.5.19", in_log="0.5.20")
    assert (c.version, c.source, c.log_version) == ("0.5.19", "option", "0.5.19")
    c = choose(engine_version=None, log_version=None, in_log="0.5.20")
    assert (c.version, c.source, c.log_version) == ("0.5.20", "log", "0.5.20")
    c = choose(engine_version=None, log_version=None, in_log=None)
    assert (c.version, c.source, c.log_version, c.note) == (DEFAULT, "default", None, ASK)
    c = choose(engine_version=None, log_version="0.5.17", in_log=None)
    assert (c.version, c.source) == (DEFAULT, "default") and "predates the modelled range" in c.note
    assert "--engine-version" in c.note
    with pytest.raises(BadInput, match="unsupported engine version '0.5.17'"):
        choose(engine_version="0.5.17", log_version=None, in_log=None)


def test_explanations_name_the_log_build_only_where_it_is_not_the_modelled_release():
    assert choose(engine_version=None, log_version="0.5.19 (lmsysorg/sglang:v0.5.19)", in_log=None).other_build is None
    assert choose(engine_version="0.5.23", log_version="0.5.19", in_log=None).other_build == "0.5.19"
    assert choose(engine_version=None, log_version="0.5.12", in_log=None).other_build == "0.5.12"


# ------------------------------------------------------------------------------ real logs, with their own versions

# the shared boot logs' sidecars: none is a modelled release, so each is modelled as the default and says why
SHARED = {
    "qwen3.5-9b-tp2-rtx4090.log": "dev/source build",
    "nemotron3-ultra-gb10-not-enough-memory.log": "predates the modelled range",
    "qwen3.8-27b-fp8-mi355x-state-cache-failure.log": "predates the modelled range",
}
SHARED_CMDS = {
    "qwen3.5-9b-tp2-rtx4090.log": "--model-path Qwen/Qwen3.5-9B --tp-size 2 --mem-fraction-static 0.8 "
                                  "--context-length 262144",
    "nemotron3-ultra-gb10-not-enough-memory.log": "--model-path nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-NVFP4 --tp 4 "
                                                  "--ep 4 --mem-fraction-static 0.85 --context-length 262144",
    "qwen3.8-27b-fp8-mi355x-state-cache-failure.log": "--model-path Qwen/Qwen3.8-27B-FP8 --mem-fraction-static 0.25",
}


@pytest.mark.parametrize("name", sorted(SHARED))
def test_shared_logs_are_checked_with_their_sidecar_versions(name):
    path = LOGS / name
    sidecar = json.loads(path.with_name(name + ".json").read_text())["sglang_version"]
    result = check_log(parse_log(path.read_text()), parse_command(SHARED_CMDS[name]), log_version=sidecar)
    assert (result["engine"]["version"], result["version_source"], result["log_version"]) == (DEFAULT, "default",
                                                                                            sidecar)
    assert SHARED[name] in result["notes"][0] and f"modelled as {DEFAULT}" in result["notes"][0]


def test_a_log_without_a_version_is_modelled_as_the_default_and_asks_for_it():
    path = LOGS / "qwen3.5-9b-tp2-rtx4090.log"
    result = check_log(parse_log(path.read_text()), parse_command(SHARED_CMDS[path.name]))
    assert (result["engine"]["version"], result["version_source"], result["log_version"]) == (DEFAULT, "default", None)
    assert result["notes"][0] == ASK


# the public records' stated versions (data/boot_logs.yaml, each with its link) and the release that models each
PUBLIC = {
    "qwen35-9b-tp2-rtx4090-local": None, "inferencex-2128-dsv4-pro-fp8-8xh200": None,
    "kvcached-459-qwen35-9b-rtx-pro-6000": None, "otel-qwen38-27b-fp8-mi355x-state-cache": None,
    "sglang-7691-deepseek-r1-dp8-mi300x": None, "dgxarley-nemotron3-ultra-nvfp4-4xgb10": None,
    "sglang-8538-llama4-maverick-h100": None, "sglang-6082-qwen25vl-72b-awq-rtx4090": None,
    "sglang-4330-l40s-speculative": None,
    "club3090-qwen38-27b-fp8-tp2-rtx3090-mf092": "0.5.19", "club3090-qwen38-27b-fp8-tp2-rtx3090-mf086": "0.5.19",
    "club3090-qwen38-27b-int4-tp2-rtx3090-ssm-fp32": "0.5.19",
    "club3090-qwen38-27b-int4-tp2-rtx3090-ssm-bf16": "0.5.19",
    "club3090-qwen38-27b-int4-tp2-rtx3090-k63": "0.5.19", "club3090-qwen38-27b-int4-tp2-rtx3090-k20": "0.5.20",
    "sglang-33713-qwen38-27b-int4-tp2-rtx3090": "0.5.19",
    # build 1cf2b8c is no release (its build profile models the page, data/sglang_builds.yaml)
    "qwen38-27b-cookbook-dspark-fp32-ll-rtx5090": None, "qwen38-27b-cookbook-dspark-fp32-ht-rtx5090": None,
}


def test_every_public_record_with_a_version_maps_to_its_release():
    versioned = {r.id: r.sglang_version for r in public_logs().records if r.sglang_version}
    assert set(versioned) == set(PUBLIC)
    for rid, text in versioned.items():
        v = stated(text)
        expected = PUBLIC[rid]
        assert (release_of(v)[0] if v else None) == expected, rid
        choice = choose(engine_version=None, log_version=text, in_log=None)
        assert choice.version == (expected or DEFAULT), rid
        assert choice.source == ("option" if expected else "default"), rid


# a 0.5.19 boot written for this test from 0.5.19's model of this command at A = 14.08, P = 22.93: the command uses
# 0.5.19's --enable-gdn-replayssm-spec, which 0.5.20 renamed (0.5.23 refuses it)
CMD_0519 = ("--model-path Qwen/Qwen3.5-9B --tp-size 2 --mem-fraction-static 0.8 --context-length 262144 "
            "--speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 "
            "--speculative-num-draft-tokens 4 --enable-gdn-replayssm-spec")


def _log_0519() -> str:
    view = EngineView(load(parse_command(CMD_0519), version="0.5.19"))
    p = view.predict(view.rest(14.08, 22.93), A=14.08, P=22.93)
    t = "[2026-09-14 10:00:06 TP0] "
    return "\n".join([
        "sglang: 0.5.19",
        f"{t}Load weight begin. avail mem=22.93 GB",
        f"{t}Load weight end. elapsed=5.50 s, type=Qwen3_5ForConditionalGeneration, avail mem=14.08 GB, mem usage=8.85 GB.",
        f"{t}Using KV cache dtype: {p['kv_dtype']}",
        f"{t}Mamba Cache is allocated. max_mamba_cache_size: {p['max_mamba_cache_size']}, conv_state size: "
        f"{p['conv_state_gib']:.2f}GB, ssm_state size: {p['ssm_state_gib']:.2f}GB intermediate_ssm_state_cache size: "
        f"{p['intermediate_ssm_gib']:.2f}GB intermediate_conv_window_cache size: {p['intermediate_conv_window_gib']:.2f}GB",
        f"{t}KV Cache is allocated. #tokens: {p['kv_tokens']}, K size: {p['k_gib']:.2f} GB, V size: {p['v_gib']:.2f} GB",
        f"{t}max_total_num_tokens={p['kv_tokens']}, chunked_prefill_size=2048, max_prefill_tokens=16384, "
        f"max_running_requests={p['max_running_requests']}, context_len=262144, available_gpu_mem=3.50 GB", ""])


def test_a_0519_log_is_modelled_by_the_0519_rules():
    boot = parse_log(_log_0519())
    assert boot.stated_version == "0.5.19"
    result = check_log(boot, parse_command(CMD_0519))
    assert (result["engine"]["version"], result["version_source"], result["log_version"]) == ("0.5.19", "log", "0.5.19")
    assert result["notes"] == ["the log says sglang 0.5.19: modelled by the 0.5.19 rules"]
    assert len(result["rows"]) == 10 and all(r["rule"] == "match" for r in result["rows"]) and result["explained"]
    with pytest.raises(BadInput, match="--enable-gdn-replayssm-spec"):
        check_log(boot, parse_command(CMD_0519), version="0.5.23")


def test_an_sglang_source_build_is_modelled_as_the_newest_release_and_says_which_flag_picks_another():
    """A build from source with no release tag in its checkout prints setuptools-scm's fallback 0.0.0.devN+g<hash>:
    it names no release, so it is modelled as the default, the newest modelled release, with a note naming the build
    and --engine-version."""
    from hybridplan.engine.api import SUPPORTED

    c = choose(engine_version=None, log_version=None, in_log="0.0.0.dev1+g5f55db35e")
    assert (c.version, c.source, c.log_version) == (SUPPORTED[-1], "default", "0.0.0.dev1+g5f55db35e")
    assert c.note == (f"the log says sglang 0.0.0.dev1+g5f55db35e: a dev/source build, not a release: hybridplan "
                      f"models releases only; modelled as {SUPPORTED[-1]} (pass --engine-version to choose)")
