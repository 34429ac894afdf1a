"""vLLM's startup checks as a verdict (engine/vllm/serving/verdict.py): the Mamba-block refusal users hit with the
card's default max_num_seqs, the model-length refusal, the free-memory check; and every launch `plan --engine vllm`
proposes, fed back to `explain --engine vllm` on the same card, serves with max_num_seqs at most its blocks."""

from __future__ import annotations

import math

import pytest

from hybridplan.engine.vllm.startup import check_free_memory, check_mamba_blocks, cudagraph_mode, model_length

GIB = 1 << 30
# issue 25's example: H100's default max_num_seqs (1024, engine/arg_utils.py::get_batch_defaults) against the blocks
# a 132,000-token Qwen3.8-27B leaves at 0.9
H100_27B = "vllm serve Qwen/Qwen3.8-27B --max-model-len 132000 --gpu-memory-utilization 0.9"


def test_the_default_max_num_seqs_is_refused_with_vllms_message_and_the_block_count(cli_json):
    code, d = cli_json("explain", "--engine", "vllm", "--gpu", "h100-80gb", "--json", "--", H100_27B)
    v = d["verdict"]
    assert code == 3 and (v["serves"], v["phase"]) == (False, "cuda_graph")
    assert d["resolved"]["max_num_seqs"] == 1024 and v["num_blocks"] == d["num_blocks"] == 286
    assert v["message"] == d["error"]["message"] == (
        "max_num_seqs (1024) exceeds available Mamba cache blocks (286). Each decode sequence requires one Mamba cache "
        "block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most 286 or increase "
        "gpu_memory_utilization.")
    assert v["rule"] == "config/compilation.py::CompilationConfig.resolve_cudagraph_mode_and_sizes"
    assert [c["phase"] for c in d["checks"]] == ["config", "free_memory", "weights", "kv_cache", "cuda_graph"]
    assert [c["passed"] for c in d["checks"]] == [True, True, True, True, False]


@pytest.mark.parametrize("extra,serves", [
    ("--enforce-eager", True),  # no CUDA graphs: no block per decode sequence is asked for
    ("-cc '{\"cudagraph_mode\": \"PIECEWISE\"}'", True),  # piecewise graphs only
    ("--max-num-seqs 286", True),  # at the blocks
    ("--max-num-seqs 287", False),
])
def test_the_block_check_follows_the_cuda_graph_mode_and_max_num_seqs(cli_json, extra, serves):
    code, d = cli_json("explain", "--engine", "vllm", "--gpu", "h100-80gb", "--json", "--", f"{H100_27B} {extra}")
    assert d["verdict"]["serves"] is serves and code == (0 if serves else 3)


def test_a_model_length_past_the_config_is_refused_as_vllm_refuses_it(cli_json):
    code, d = cli_json("explain", "--engine", "vllm", "--json", "--", "vllm serve Qwen/Qwen3.8-27B --max-model-len 300000")
    assert code == 3 and d["error"]["message"].startswith(
        "User-specified max_model_len (300000) is greater than the derived max_model_len (max_position_embeddings="
        "262144.0 or model_max_length=None in model's config.json).")
    code, d = cli_json("explain", "--engine", "vllm", "--json", "--", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve "
                       "Qwen/Qwen3.8-27B --max-model-len 300000")
    assert code == 0 and d["max_model_len"] == 300000


def test_the_rules_alone():
    assert model_length({"max_position_embeddings": 262144}).derived == 262144
    assert model_length({"max_position_embeddings": 4096, "rope_scaling": {"rope_type": "linear", "factor": 4}}
                        ).derived == 16384
    assert model_length({"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "yarn", "factor": 4}}
                        ).derived == 131072  # YaRN's max_position_embeddings is already scaled
    assert model_length({}) is None
    assert cudagraph_mode({}) == ("FULL_AND_PIECEWISE", "optimization level 2 (config/vllm.py::OPTIMIZATION_LEVEL_02)")
    assert cudagraph_mode({"optimization_level": "0"})[0] == "NONE"
    assert cudagraph_mode({"enforce_eager": True})[0] == "NONE"
    assert check_mamba_blocks(10, 10, "FULL_AND_PIECEWISE") is None
    assert check_mamba_blocks(11, 10, "PIECEWISE") is None
    assert "max_num_seqs (11) exceeds available Mamba cache blocks (10)" in check_mamba_blocks(11, 10, "FULL").message
    assert check_free_memory(30 * GIB, 31 * GIB, 0.97, math.ceil(31 * GIB * 0.97)).message == (
        "Free memory on device cuda:0 (30.0/31.0 GiB) on startup is less than desired GPU memory utilization (0.97, "
        "30.07 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.")


# every target the README and the golden cases plan on vLLM, and the refused example
TARGETS = [
    ("h100-80gb", None, 32000, 8, "vllm serve Qwen/Qwen3.8-27B --gpu-memory-utilization 0.9"),
    ("h100-80gb", None, 132000, 2, "vllm serve Qwen/Qwen3.8-27B --gpu-memory-utilization 0.9"),
    ("rtx5090", 6.01, 65536, 2, "vllm serve Qwen/Qwen3.6-35B-A3B --dtype bfloat16 --max-model-len 131072 "
                                "--kv-cache-dtype fp8 --max-num-seqs 1"),
    ("h200", None, 131072, 16, "vllm serve Qwen/Qwen3.6-35B-A3B"),
    ("h100-80gb", None, 32768, 16, "vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --max-model-len 32768 "
                                   "--enable-prefix-caching"),
]


@pytest.mark.parametrize("gpu,kv,length,conc,command", TARGETS)
def test_every_proposed_launch_serves_when_fed_back(cli_json, gpu, kv, length, conc, command):
    memory = ["--kv-memory-gib", str(kv)] if kv is not None else []
    code, plan = cli_json("plan", "--engine", "vllm", "--gpu", gpu, *memory, "-L", str(length), "-C", str(conc),
                          "--json", "--", command)
    assert code == 0 and plan["fits"], plan.get("cheapest_change")
    best = plan["best"]
    if kv is not None:  # the measured boot's memory, moved by what the proposed utilization requests over it
        memory = ["--kv-memory-gib", str(best["available_kv_gib"])]
    code, back = cli_json("explain", "--engine", "vllm", "--gpu", gpu, *memory, "--json", "--", plan["command"])
    v = back["verdict"]
    assert code == 0 and v["serves"], v
    # the plan carries the same verdict (fed back before it is shown), and says what its confidence rests on
    assert {k: plan["verdict"][k] for k in ("serves", "phase", "why")} == {k: v[k] for k in ("serves", "phase", "why")}
    conf = plan["verdict"]["confidence"]
    if kv is None:
        assert conf == v["confidence"]
    else:  # measured at the boot's utilization; moved to another one, calibrated by the difference
        moved = best["gpu_memory_utilization"] != plan["measured"]["gpu_memory_utilization"]
        assert conf["level"] == ("calibrated" if moved else "measured")
    if gpu == "h100-80gb" and "Qwen3.8-27B" in command:  # the public H100 launches of it, which failed
        assert any("vllm-project/vllm/issues/49064" in b for b in conf["basis"]), conf
