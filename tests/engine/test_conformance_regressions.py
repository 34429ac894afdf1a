"""Rules the engine conformance suite found drifting; each expected value is what sglang 0.5.23 itself computed."""

from __future__ import annotations

import pytest

from hybridplan.engine.args import Platform
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
