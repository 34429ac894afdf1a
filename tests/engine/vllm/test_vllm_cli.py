"""`hybridplan explain --engine vllm` as a user runs it: the JSON fields, exit codes and one-line errors."""

from __future__ import annotations


def test_explain_json_from_logged_kv_memory(cli_json):
    code, d = cli_json("explain", "--engine", "vllm", "--kv-memory-gib", "40", "--json", "--",
                       "vllm", "serve", "Qwen/Qwen3.5-27B", "--disable-prefix-caching")
    assert code == 0
    assert (d["kv_cache_tokens"], d["num_blocks"], d["block_size"]) == (647604, 835, 784)
    assert round(d["max_concurrency"], 2) == 2.47
    assert d["pages"] == {"attention_before_unification": 65536, "attention_after_unification": 3211264,
                          "state_unpadded": 3207168, "unified": 3211264, "mamba_page_size_padded": 3211264,
                          "state_padding_pct": 0.13}
    assert [g["blocks_per_request"] for g in d["groups"]] == [1, 1, 1, 335] and d["state_pages_per_request"] == 3
    assert d["predicted_lines"][-2:] == ["GPU KV cache size: 647,604 tokens",
                                         "Maximum concurrency for 262,144 tokens per request: 2.47x"]
    assert d["provenance"]["kv_cache_tokens"].endswith("get_kv_cache_capacity")


def test_align_mode_state_pages_per_request(cli_json):
    code, d = cli_json("explain", "--engine", "vllm", "--engine-version", "0.33.0", "--kv-memory-gib", "40", "--json",
                       "--", "vllm serve Qwen/Qwen3.5-27B --max-model-len 32768")
    assert code == 0 and d["resolved"]["mamba_cache_mode"] == "align"
    assert d["block_size"] == d["mamba_block_size"] == 832
    assert d["state_pages_per_request"] == 9 and d["blocks_per_request"] == 9 + 40  # cdiv(32768, 832) = 40


def test_refusals_and_bad_input_exit_codes(cli, cli_json):
    code, d = cli_json("explain", "--engine", "vllm", "--kv-memory-gib", "6", "--json", "--",
                       "vllm", "serve", "Qwen/Qwen3.5-27B")
    assert code == 3 and "estimated maximum model length is 89856" in d["error"]["message"]
    code, out, err = cli("explain", "--engine", "vllm", "--", "vllm", "serve", "Qwen/Qwen3.5-27B")
    assert code == 2 and "--kv-memory-gib: required" in err and "Traceback" not in err
    code, out, err = cli("explain", "--engine", "vllm", "--engine-version", "0.10.0", "--kv-memory-gib", "4", "--",
                         "vllm", "serve", "Qwen/Qwen3.5-27B")
    assert code == 2 and "vLLM 0.10.0 is not modelled" in err
