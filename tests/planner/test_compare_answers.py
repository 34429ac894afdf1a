"""`compare` answers in full (issue 26, item 2): an engine that would not start still has its side (its verdict,
the engine's message and the cheapest change that would serve, which serves when explained), and a whole launch is
compared as the user has it: run as typed on its own engine, its shared settings carried to the other, each leg
saying what it carried, added and could not carry."""

from __future__ import annotations

import json
import shlex

import pytest

H200_FP8 = ("python -m sglang.launch_server --trust-remote-code --model-path Qwen/Qwen3.8-27B-FP8 --kv-cache-dtype "
            "fp8_e4m3 --mem-fraction-static 0.85 --chunked-prefill-size 32768 --mamba-full-memory-ratio 4.59 "
            "--mamba-ssm-dtype float32")
MTP = ("python -m sglang.launch_server --model-path Qwen/Qwen3.5-27B --speculative-algorithm EAGLE "
       "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4")
DFLASH = ("python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B --speculative-algorithm DFLASH "
          "--speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2 --speculative-num-draft-tokens 8")


def test_an_engine_that_would_not_start_still_answers(cli_json):
    """The issue's example aborted with SGLang's refusal and showed nothing of vLLM: now SGLang's side is its
    verdict (the state pool, the engine's message and rule) and the cheapest change, whose command serves when
    explained on the same card; vLLM's side keeps its numbers beside it."""
    code, d = cli_json("compare", "--json", "--model", "Qwen/Qwen3.5-35B-A3B", "--gpu", "h100-80gb", "-L", "32768")
    assert code == 0
    s, v = d["sglang"], d["vllm"]
    assert s["verdict"]["serves"] is False and s["verdict"]["phase"] == "state_pool"
    assert s["error"]["message"].startswith("Not enough GPU memory for hybrid") and s["error"]["rule"]
    assert s["kv_tokens"] is None and s["requests_at_length"] is None
    fix = s["cheapest_change"]
    assert fix["serves"] and "--mem-fraction-static" in fix["change"] and fix["command"].startswith(s["command"])
    code, fixed = cli_json("explain", "--json", "--gpu", "h100-80gb", "--", fix["command"])
    assert code == 0 and fixed["memory"]["verdict"]["serves"]
    assert v["kv_tokens"] > 0 and v["requests_at_length"] >= 1
    if v["verdict"]["serves"] is False:  # vLLM's own refusal has its cheapest change too
        code, vfixed = cli_json("explain", "--json", "--engine", "vllm", "--gpu", "h100-80gb", "--",
                                v["cheapest_change"]["command"])
        assert code == 0 and vfixed["verdict"]["serves"]
    assert any(line.startswith("sglang fails (state_pool)") for line in d["why"])


def test_the_whole_launch_is_compared_as_the_user_has_it(cli_json):
    """The Deploy page's H200 FP8 command: SGLang runs it as typed (so the numbers are explain's on the same card:
    102 requests, not the 57-59 its defaults gave), vLLM gets what it shares (fp8 KV, the float32 state, the prefill
    chunk as its batched tokens, the request length as its max_model_len) and each SGLang flag it cannot take is
    named with why."""
    code, d = cli_json("compare", "--json", "--gpu", "h200", "-L", "5120", "--", *shlex.split(H200_FP8))
    assert code == 0 and d["model"] == "Qwen/Qwen3.8-27B-FP8" and d["launch_engine"] == "sglang"
    s, v = d["sglang"], d["vllm"]
    code, e = cli_json("explain", "--json", "--gpu", "h200", "--", H200_FP8)
    assert code == 0
    assert s["command"] == H200_FP8 and s["launch"]["from"] is None
    assert (s["max_running_requests"], s["kv_tokens"], s["state_slots"]) == \
        (e["max_running_requests"], e["max_total_num_tokens"], e["max_mamba_cache_size"]) and s["max_running_requests"] == 102
    assert s["verdict"] == e["memory"]["verdict"]
    assert "--mem-fraction-static 0.85" in s["memory_source"]
    assert v["command"] == ("vllm serve Qwen/Qwen3.8-27B-FP8 --max-model-len 5120 -tp 1 --kv-cache-dtype fp8 "
                            "--mamba-ssm-cache-dtype float32 --max-num-batched-tokens 32768")
    launch = v["launch"]
    assert launch["from"] == "sglang" and "--max-num-batched-tokens 32768" in launch["carried"]
    assert launch["added"][0].startswith("--max-model-len 5120: the launch states no context length")
    dropped = {line.split(":")[0] for line in launch["not_carried"]}
    assert {"--mem-fraction-static 0.85", "--mamba-full-memory-ratio 4.59", "--trust-remote-code"} <= dropped
    code, ve = cli_json("explain", "--json", "--engine", "vllm", "--gpu", "h200", "--", v["command"])
    assert code == 0 and v["kv_tokens"] == ve["kv_cache_tokens"] and v["verdict"] == ve["verdict"]


@pytest.mark.parametrize("launch,carried,dropped", [
    (MTP, '--speculative-config {"method": "mtp", "num_speculative_tokens": 3}', None),
    (DFLASH, None, "speculative decoding (dflash, draft incoai/Qwen3.8-27B-DFlash2): vLLM is modelled with the "
                   "checkpoint's own MTP block only"),
])
def test_speculative_decoding_is_carried_where_the_other_engine_has_it(cli_json, launch, carried, dropped):
    code, d = cli_json("compare", "--json", "--gpu", "h200", "-L", "8192", "--", launch)
    assert code == 0
    v = d["vllm"]["launch"]
    if carried:
        assert carried in v["carried"] and d["vllm"]["verdict"] is not None
    else:
        assert dropped in v["not_carried"] and "--speculative-config" not in d["vllm"]["command"]
    assert d["sglang"]["command"] == launch  # SGLang's own launch keeps its speculative decoding


def test_a_vllm_launch_is_carried_to_sglang(cli_json):
    """From vLLM: its max_model_len, max_num_seqs, prefix caching off and MTP become SGLang's context length, request
    cap, --disable-radix-cache and EAGLE steps; its utilization is vLLM's own."""
    launch = ("vllm serve Qwen/Qwen3.5-27B --max-model-len 65536 --max-num-seqs 8 --gpu-memory-utilization 0.85 "
              "--disable-prefix-caching --speculative-config " + shlex.quote(json.dumps(
                  {"method": "mtp", "num_speculative_tokens": 2})))
    code, d = cli_json("compare", "--json", "--engine", "vllm", "--gpu", "h200", "-L", "32768", "--",
                       *shlex.split(launch))
    assert code == 0 and d["launch_engine"] == "vllm"
    s = d["sglang"]
    assert s["command"] == ("python -m sglang.launch_server --model-path Qwen/Qwen3.5-27B --context-length 65536 "
                            "--tp 1 --max-running-requests 8 --disable-radix-cache --speculative-algorithm EAGLE "
                            "--speculative-num-steps 2 --speculative-eagle-topk 1 --speculative-num-draft-tokens 3")
    assert s["launch"]["added"] == [] and s["launch"]["not_carried"][0].startswith("--gpu-memory-utilization 0.85: ")
    assert d["vllm"]["command"] == launch and d["vllm"]["max_num_seqs"] == 8
    # vLLM's max_model_len is the launch's 65,536: the requests it serves are counted at compare's 32,768 tokens
    code, ve = cli_json("explain", "--json", "--engine", "vllm", "--gpu", "h200", "--", launch)
    code, vs = cli_json("explain", "--json", "--engine", "vllm", "--gpu", "h200", "--",
                        launch.replace("--max-model-len 65536", "--max-model-len 32768"))
    assert ve["max_model_len"] == 65536 and d["vllm"]["blocks_per_request"] == vs["blocks_per_request"] \
        != ve["blocks_per_request"]
    assert d["vllm"]["requests_at_length"] == min(8, ve["num_blocks"] // vs["blocks_per_request"])


def test_a_launch_with_the_options_it_states_is_refused(cli):
    code, _, err = cli("compare", "--gpu", "h200", "-L", "4096", "--model", "Qwen/Qwen3.5-9B", "--", MTP)
    assert code == 2 and err.startswith("error: --model: the launch command states it")


def test_the_python_api_gives_each_engines_verdict_and_fix():
    import hybridplan

    c = hybridplan.compare("Qwen/Qwen3.5-35B-A3B", request_length=32768, gpu="h100-80gb")
    assert c.exit_code == 0 and c.verdict("sglang").serves is False and c.verdict("sglang").phase == "state_pool"
    assert c.cheapest_change("sglang")["serves"] and c.leg("vllm")["kv_tokens"] > 0
    c = hybridplan.compare(command=H200_FP8, request_length=5120, gpu="h200")
    assert c.leg("sglang")["max_running_requests"] == 102 and c.verdict("vllm") is not None
    assert c.leg("vllm")["launch"]["from"] == "sglang"


def test_a_card_known_by_its_memory_sizes_both_engines(cli_json):
    """--gpu-memory-gib alone: each engine's explain on that memory (SGLang's and vLLM's card-alone estimates), each
    verdict saying what a memory alone leaves unknown where the engine says so."""
    code, d = cli_json("compare", "--json", "--model", "Qwen/Qwen3.5-9B", "--gpu-memory-gib", "80", "-L", "32768")
    assert code == 0 and d["gpu"] is None and d["gpu_memory_gib"] == 80
    code, s = cli_json("explain", "--json", "--gpu-memory-gib", "80", "--", d["sglang"]["command"])
    assert d["sglang"]["kv_tokens"] == s["max_total_num_tokens"] and d["sglang"]["verdict"] == s["memory"]["verdict"]
    code, v = cli_json("explain", "--json", "--engine", "vllm", "--gpu-memory-gib", "80", "--", d["vllm"]["command"])
    assert d["vllm"]["kv_tokens"] == v["kv_cache_tokens"] and d["vllm"]["verdict"] == v["verdict"]
    assert "known only by its memory" in d["vllm"]["verdict"]["confidence"]["note"]
    assert d["why"][0].startswith("on one 80 GiB card sglang keeps")


def test_compare_models_a_version_only_as_itself(cli, cli_json):
    """A build a page pins is modelled as itself (its leg names it); a version string explain would model by a
    stand-in release is refused, the refusal listing the releases and builds compare takes."""
    code, d = cli_json("compare", "--json", "--gpu", "h200", "-L", "5120", "--sglang-version", "1cf2b8c", "--", H200_FP8)
    assert code == 0 and d["sglang"]["version"] == "1cf2b8c" and d["sglang"]["max_running_requests"] == 102
    code, _, err = cli("compare", "--gpu", "h200", "-L", "5120", "--vllm-version", "0.25.7", "--", H200_FP8)
    assert code == 2 and err.startswith("error: --vllm-version: vLLM 0.25.7 is not modelled (0.20.0, ")
    code, _, err = cli("compare", "--gpu", "h200", "-L", "5120", "--sglang-version", "0.5.17", "--", H200_FP8)
    assert code == 2 and err.rstrip().endswith("0.5.23, 1cf2b8c, 561c8f3)")


def test_the_text_table_says_each_verdicts_confidence(cli, cli_json):
    """The table's confidence row is each leg's verdict confidence, '-' where a verdict has none (SGLang's on a card
    known only by its memory: no measured launch is comparable; vLLM's says extrapolated, naming what is unknown)."""
    args = ("compare", "--model", "Qwen/Qwen3.5-9B", "--gpu-memory-gib", "80", "-L", "32768")
    _, d = cli_json(*args, "--json")
    code, out, _ = cli(*args)
    row = next(line for line in out.splitlines() if line.startswith("│ confidence"))
    levels = [(d[e]["verdict"]["confidence"] or {}).get("level", "-") for e in ("sglang", "vllm")]
    assert code == 0 and [cell.strip() for cell in row.split("│")[2:4]] == levels == ["-", "extrapolated"]
