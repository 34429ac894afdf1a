"""`hybridplan explain --engine vllm` as a user runs it: the JSON fields, exit codes and one-line errors."""

from __future__ import annotations

from hybridplan.engine.vllm.engine import for_version as vllm_release

from pathlib import Path


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
    # an older release is modelled by the oldest modelled one (0.20.0's wording), a string that is no version refused
    code, out, err = cli("explain", "--engine", "vllm", "--engine-version", "0.10.0", "--kv-memory-gib", "4", "--",
                         "vllm", "serve", "Qwen/Qwen3.5-27B")
    assert code == 3 and "the models's max seq len" in out.replace("\n", " ")
    code, out, err = cli("explain", "--engine", "vllm", "--engine-version", "latest", "--kv-memory-gib", "4", "--",
                         "vllm", "serve", "Qwen/Qwen3.5-27B")
    assert code == 2 and "'latest' is not a vLLM version" in err


LOG_652 = (Path(__file__).resolve().parents[2] / "fixtures" / "vllm" / "club3090-652-rtx5090.log").read_text()
# https://github.com/noonghunna/club-3090/issues/652 (RTX 5090), an excerpt; its model path mapped to the catalog id


def test_logs_check_reads_a_vllm_boot_log(cli_json, tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text(LOG_652)
    code, d = cli_json("logs", "check", "--engine", "vllm", "--gpu", "rtx5090", "--json", str(log))
    assert code == 0 and d["explained"] and d["log_release"] == d["modelled_release"] == "0.24.0"
    assert [(c["quantity"], c["match"]) for c in d["checks"]] == [
        ("max_model_len", True), ("kv_cache_tokens", True), ("max_concurrency", True)]
    # 0.24.0 keeps no prefill checkpoint page, so an sm90 card plans the same pool under the log's own release ...
    code, d = cli_json("logs", "check", "--engine", "vllm", "--json", str(log))
    assert code == 0 and d["explained"]
    # ... where 0.33.0's FlashInfer GDN prefill checkpoints would raise the block: vLLM would log fewer tokens
    code, d = cli_json("logs", "check", "--engine", "vllm", "--engine-version", "0.33.0", "--json", str(log))
    assert code == 1 and not d["explained"] and d["modelled_release"] == "0.33.0"
    tokens = next(c for c in d["checks"] if c["quantity"] == "kv_cache_tokens")
    assert tokens["predicted"] == [542492] and tokens["rule"].endswith("get_kv_cache_capacity")


def test_logs_check_names_what_is_missing(cli, tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text("INFO GPU KV cache size: 1,000 tokens\n")
    code, out, err = cli("logs", "check", "--engine", "vllm", str(log))
    assert code == 2 and "non-default args" in err and "Traceback" not in err


def test_plan_raises_utilization_from_the_measured_boot(cli_json):
    """club-3090#652's boot (6.01 GiB at the default 0.92 on an RTX 5090, 32,113 MiB to torch) serves 4.35 requests
    of 131,072 tokens; five need 0.95: 6.01 GiB + ceil(total x 0.95) - ceil(total x 0.92) of KV memory."""
    code, d = cli_json("plan", "--engine", "vllm", "--gpu", "rtx5090", "--kv-memory-gib", "6.01", "-L", "131072",
                       "-C", "5", "--json", "--", "vllm", "serve", "Qwen/Qwen3.6-35B-A3B", "--dtype", "bfloat16",
                       "--kv-cache-dtype", "fp8", "--max-num-seqs", "8")
    assert code == 0 and d["fits"]
    assert d["baseline"]["kv_cache_tokens"] == 569878 and not d["baseline"]["fits"]
    best = d["best"]
    assert best["changes"] == {"--gpu-memory-utilization": "0.95"}
    assert (best["kv_cache_tokens"], round(best["max_concurrency"], 2)) == (659159, 5.03)
    assert d["command"].endswith("--gpu-memory-utilization 0.95 --max-model-len 131072")
    assert len(d["warnings"]) == 1  # max_num_seqs 8 already admits five


def test_plan_names_a_request_cap_below_the_target(cli_json):
    code, d = cli_json("plan", "--engine", "vllm", "--gpu", "rtx5090", "--kv-memory-gib", "6.01", "-L", "131072",
                       "-C", "5", "--json", "--", "vllm serve Qwen/Qwen3.6-35B-A3B --kv-cache-dtype fp8 --max-num-seqs 1")
    assert code == 0 and d["max_num_seqs"] == 1
    assert all(r["changes"].get("--max-num-seqs") == "5" for r in d["candidates"])
    assert any("max_num_seqs 1 < 5" in w for w in d["warnings"])


def test_resolution_takes_the_cards_batch_defaults():
    from hybridplan.models.loader import load_model

    engine, geo = vllm_release(), load_model("Qwen/Qwen3.5-27B")
    cmd = engine.parse_command("vllm serve Qwen/Qwen3.5-27B --max-model-len 4096")
    # engine/arg_utils.py::get_batch_defaults: H200 (>= 70 GiB, not A100) 1024 / 8192; RTX 5090 256 / 2048
    h200 = engine.resolve(cmd, geo, 90, 143771 << 20, "NVIDIA H200")
    rtx = engine.resolve(cmd, geo, 120, 32113 << 20, "NVIDIA GeForce RTX 5090")
    a100 = engine.resolve(cmd, geo, 80, 81920 << 20, "NVIDIA A100-SXM4-80GB")
    assert (h200.max_num_seqs, h200.max_num_batched_tokens) == (1024, 8192)
    assert (rtx.max_num_seqs, rtx.max_num_batched_tokens) == (256, 2048)
    assert (a100.max_num_seqs, a100.max_num_batched_tokens) == (256, 2048)
    unknown = engine.resolve(cmd, geo)
    assert unknown.max_num_seqs is None and unknown.max_num_batched_tokens is None


def test_compare_sglang_and_vllm_from_the_same_cache_memory(cli_json):
    """Qwen3.5-27B, 40 GiB of cache memory, 131,072-token requests: SGLang 0.5.23's default state pool (131 slots of
    153,944,064 B, five a request) leaves 345,292 KV tokens, two full-length requests; vLLM 0.33.0 pages the state
    (832-token blocks, 9 state pages a request in align mode) and logs 617,686 tokens, 4.71x."""
    code, d = cli_json("compare", "--model", "Qwen/Qwen3.5-27B", "--memory-gib", "40", "-L", "131072", "--json")
    assert code == 0
    s, v = d["sglang"], d["vllm"]
    assert (s["kv_tokens"], s["state_slots"], s["slots_per_request"], s["requests_at_length"]) == (345292, 131, 5, 2)
    assert s["state_bytes_per_request"] == 5 * 153944064
    assert (v["kv_tokens"], v["block_size"], v["state_pages_per_request"], v["requests_at_length"]) == (617686, 832, 9, 4)
    assert v["state_bytes_per_request"] == 9 * v["bytes_per_block"]
    assert len(d["why"]) == 3 and "state pool of 131 slots" in d["why"][0]


def test_compare_on_a_card_alone_tells_each_engines_own_story(cli_json):
    """--gpu without --memory-gib: each engine sizes from what its own timeline leaves on the card, and the numbers
    are the ones `explain --gpu` gives for the same launch on each engine (one story, not a second model)."""
    code, d = cli_json("compare", "--model", "Qwen/Qwen3.6-35B-A3B", "--gpu", "h200", "-L", "131072", "--json")
    assert code == 0 and d["memory_gib"] is None
    s, v = d["sglang"], d["vllm"]
    code, se = cli_json("explain", "--gpu", "h200", "--json", "--", s["command"])
    assert code == 0
    code, ve = cli_json("explain", "--engine", "vllm", "--gpu", "h200", "--json", "--", v["command"])
    assert code == 0
    assert s["kv_tokens"] == se["max_total_num_tokens"] and s["cache_memory_gib"] == se["pool_budget_gib"]
    assert s["state_slots"] == se["max_mamba_cache_size"]
    frac = se["memory"]["timeline"]["mem_fraction_static"]["value"]
    assert f"--mem-fraction-static {frac:.3f}" in s["memory_source"]
    assert v["kv_tokens"] == ve["kv_cache_tokens"] and v["cache_memory_gib"] == ve["available_kv_memory_bytes"] / 2**30
    assert ve["memory"]["source"] == "card" and "gpu_memory_utilization 0.92" in v["memory_source"]
    assert d["why"][0].startswith("on one h200 sglang keeps") and len(d["why"]) == 4


def test_compare_needs_memory_or_a_card(cli):
    code, _, err = cli("compare", "--model", "Qwen/Qwen3.5-27B", "-L", "4096")
    assert code == 2 and err.count("\n") == 1 and "--memory-gib" in err and "--gpu" in err


def test_compare_names_its_own_release_flag(cli):
    code, _, err = cli("compare", "--model", "Qwen/Qwen3.5-27B", "--memory-gib", "40", "-L", "4096",
                       "--vllm-version", "9.9.9")
    assert code == 2 and err.startswith("error: --vllm-version: vLLM 9.9.9 is not modelled") and err.count("\n") == 1


def test_compare_refuses_what_it_does_not_model(cli):
    code, _, err = cli("compare", "--model", "Qwen/Qwen3.5-27B", "--memory-gib", "40", "-L", "4096",
                       "--kv-cache-dtype", "int8")
    assert code == 2 and "--kv-cache-dtype" in err


def test_explain_without_kv_memory_lays_out_the_pool(cli_json):
    """No logged memory: the block size, pages, groups and blocks per request, the sizing fields null."""
    code, d = cli_json("explain", "--engine", "vllm", "--json", "--", "vllm serve Qwen/Qwen3.5-27B --max-model-len 32768")
    assert code == 0
    assert (d["block_size"], d["blocks_per_request"], d["state_pages_per_request"]) == (832, 49, 9)
    assert d["kv_cache_tokens"] is None and d["max_concurrency"] is None and d["num_blocks"] is None
    assert d["predicted_lines"][0].startswith("Setting attention block size to 832 tokens")
    assert "sizes the pool" in d["notes"][0]


def test_logs_check_reads_the_block_size_and_padding_lines(cli_json, tmp_path):
    """vLLM's own planning (the conformance oracle) gives Qwen3.5-27B with prefix caching off a 784-token block and a
    state page padded by 0.13% (3,207,168 -> 3,211,264 B); a log stating other values is not explained."""
    lines = ["INFO non-default args: {'model_tag': 'Qwen/Qwen3.5-27B', 'max_model_len': 32768, "
             "'enable_prefix_caching': False}",
             "INFO [interface.py:911] Setting attention block size to {block} tokens to ensure that attention page "
             "size is >= mamba page size.",
             "INFO [interface.py:935] Padding mamba page size by {pct}% to ensure that mamba page size and attention "
             "page size are exactly equal.",
             "INFO [gpu_worker.py:563] Available KV cache memory: 40.00 GiB"]
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(lines).replace("{block}", "784").replace("{pct}", "0.13"))
    code, d = cli_json("logs", "check", "--engine", "vllm", "--json", str(log))
    assert code == 0 and [c["quantity"] for c in d["checks"]] == ["block_size", "padding_pct"]
    log.write_text("\n".join(lines).replace("{block}", "800").replace("{pct}", "2.17"))
    code, d = cli_json("logs", "check", "--engine", "vllm", "--json", str(log))
    assert code == 1 and all(not c["match"] and c["rule"].startswith("platforms/interface.py") for c in d["checks"])


def test_explain_with_a_card_sizes_the_pool_from_the_card_alone(cli_json):
    """--gpu without --kv-memory-gib: vLLM's determine_available_memory timeline, each term sourced; the KV pool the
    engine model sizes is requested - weights - overhead - activation - CUDA graphs (talos#1995's launch: 5.07 GiB
    against its logged 4.99)."""
    code, d = cli_json("explain", "--engine", "vllm", "--gpu", "rtx3090", "--json", "--",
                       "vllm serve Qwen/Qwen3.8-27B-FP8 -tp 2 --gpu-memory-utilization 0.92 --kv-cache-dtype fp8_e4m3 "
                       "--enable-prefix-caching --max-num-batched-tokens 8192 --max-model-len 131072 --max-num-seqs 2")
    assert code == 0
    t = d["memory"]["timeline"]
    parts = t["requested_gib"]["value"] - sum(t[k]["value"] for k in
                                              ("weights_gib", "overhead_gib", "activation_gib", "cudagraph_gib"))
    assert abs(parts - t["available_gib"]["value"]) < 0.005
    assert t["requested_gib"]["source"] == "engine rule" and t["activation_gib"]["source"] == "estimate"
    assert d["memory"]["available_kv_gib"] == 5.07 and d["block_size"] == 1568
    assert d["kv_cache_tokens"] == 307291 and "card alone" in d["notes"][0]


def test_plan_without_a_boot_searches_from_the_card_alone(cli_json):
    """No --kv-memory-gib: the KV memory at each utilization is the card-alone estimate, the baseline is the engine
    default 0.92 and no candidate goes past the no-evidence bound max(0.92 + 0.05, 0.90) = 0.97, whatever --max-util
    asks. Qwen3.5-27B on an H200 holds 4.35 requests of 262,144 tokens at 0.92 (bf16 KV); the cheapest launch that
    holds 8 keeps 0.92 and quantizes the KV to fp8 (1,600-token blocks, 8.50x)."""
    code, d = cli_json("plan", "--engine", "vllm", "--gpu", "h200", "-L", "262144", "-C", "8", "--max-util", "0.99",
                       "--json", "--", "vllm serve Qwen/Qwen3.5-27B")
    assert code == 0
    assert d["measured"]["source"] == "card" and d["measured"]["ceiling"] == 0.97
    assert not d["baseline"]["fits"] and d["baseline"]["gpu_memory_utilization"] == 0.92
    assert max(r["gpu_memory_utilization"] for r in d["candidates"]) <= 0.97
    assert d["best"]["changes"] == {"--kv-cache-dtype": "fp8"} and d["best"]["block_size"] == 1600
    assert d["best"]["max_concurrency"] >= 8
    assert d["command"] == "vllm serve Qwen/Qwen3.5-27B --kv-cache-dtype fp8 --max-model-len 262144"


def test_card_alone_on_unified_memory_says_what_it_leaves_out(cli_json):
    code, d = cli_json("explain", "--engine", "vllm", "--gpu", "dgx-spark", "--json", "--",
                       "vllm serve Qwen/Qwen3.8-27B --max-model-len 32768")
    assert code == 0 and d["memory"]["source"] == "card"
    assert any("shares its memory with the host" in n for n in d["notes"])
    code, d = cli_json("explain", "--engine", "vllm", "--gpu", "h200", "--json", "--",
                       "vllm serve Qwen/Qwen3.8-27B --max-model-len 32768")
    assert not any("shares its memory" in n for n in d["notes"])


def test_a_value_with_a_newline_is_refused_on_one_line(cli):
    code, _, err = cli("explain", "--engine", "vllm", "--", "vllm", "serve", "Qwen/Qwen3.8-27B", "--max-model-len",
                       "0\n0")
    assert code == 2 and "--max-model-len" in err and "'0\\n0'" in err and "Traceback" not in err


def test_plan_and_compare_model_an_older_release(cli_json):
    """plan --engine-version 0.20.1 turns prefix caching off with that release's own spelling (--no-enable-prefix-
    caching: 0.33.0's --disable-prefix-caching is no 0.20.1 flag), and finds club-3090#652's launch serving five
    131,072-token requests at 0.95 (659,159 tokens) or, without prefix caching, at 0.94; compare --vllm-version 0.20.1
    runs the state in 'none' mode (prefix caching off by default there), 0.33.0 in 'align'."""
    code, d = cli_json("plan", "--engine", "vllm", "--engine-version", "0.20.1", "--gpu", "rtx5090", "--kv-memory-gib",
                       "6.01", "-L", "131072", "-C", "5", "--json", "--", "vllm serve nvidia/Qwen3.6-35B-A3B-NVFP4 "
                       "--max-model-len 131072 --kv-cache-dtype fp8 --enable-prefix-caching --max-num-seqs 8")
    assert code == 0 and d["fits"] and d["baseline"]["kv_cache_tokens"] == 569878
    assert [(r["changes"], r["kv_cache_tokens"]) for r in d["candidates"]] == [
        ({"--gpu-memory-utilization": "0.95"}, 659159),
        ({"--no-enable-prefix-caching": "", "--gpu-memory-utilization": "0.94"}, 657345)]
    modes = {}
    for version in ("0.20.1", "0.33.0"):
        code, d = cli_json("compare", "--model", "Qwen/Qwen3.6-27B", "--memory-gib", "10", "-L", "65536",
                           "--vllm-version", version, "--json")
        assert code == 0 and d["vllm"]["version"] == version
        modes[version] = d["vllm"]["mamba_cache_mode"]
    assert modes == {"0.20.1": "none", "0.33.0": "align"}


def test_plan_keeps_the_prefix_caching_it_was_asked_for_in_align_mode(cli_json):
    """Nemotron-Nano-9B-v2 under prefix caching on 0.24.0 runs 'all' mode (a state page for every 1,408-token block:
    3.20 requests of 131,072 tokens on an H100 from the card alone); turning prefix caching off or keeping it in
    'align' mode each serve 8 with one change, and the plan keeps what the launch asked for. The rewritten launch
    replaces the launch's own --max-model-len instead of repeating it."""
    code, d = cli_json("plan", "--engine", "vllm", "--engine-version", "0.24.0", "--gpu", "h100-80gb", "-L", "131072",
                       "-C", "8", "--json", "--", "vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --enable-prefix-caching "
                       "--max-model-len 4096")
    assert code == 0 and d["baseline"]["mamba_cache_mode"] == "all" and not d["baseline"]["fits"]
    one_change = [r for r in d["candidates"] if r["fits"] and len(r["changes"]) == 1]
    assert {tuple(r["changes"]) for r in one_change} == {("--no-enable-prefix-caching",), ("--mamba-cache-mode",)}
    assert d["best"]["changes"] == {"--mamba-cache-mode": "align"} and d["best"]["mamba_cache_mode"] == "align"
    assert d["command"] == ("vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --enable-prefix-caching --mamba-cache-mode "
                            "align --max-model-len 131072")


def test_plan_offers_a_bfloat16_state_where_the_release_takes_it(cli_json):
    """Qwen3.5-27B's recurrent state is float32 by its config (mamba_ssm_dtype): 0.33.0's parser takes
    --mamba-ssm-cache-dtype bfloat16, so halving it is a candidate, priced after fp8 KV (a numerics trade-off on the
    state the model asks to keep in float32); 0.20.1's parser has no bfloat16 there, so it is not offered. Every
    candidate says why each change is proposed."""
    launch = ["--gpu", "h200", "-L", "262144", "-C", "8", "--json", "--", "vllm serve Qwen/Qwen3.5-27B"]
    code, d = cli_json("plan", "--engine", "vllm", *launch)
    assert code == 0 and d["best"]["changes"] == {"--kv-cache-dtype": "fp8"}
    assert d["best"]["why"]["--kv-cache-dtype"].startswith("fp8 KV: half the attention page")
    assert any(r["changes"].get("--mamba-ssm-cache-dtype") == "bfloat16" for r in d["candidates"])
    assert all(set(r["why"]) == set(r["changes"]) for r in d["candidates"])
    code, old = cli_json("plan", "--engine", "vllm", "--engine-version", "0.20.1", *launch)
    assert code == 0 and not any("--mamba-ssm-cache-dtype" in r["changes"] for r in old["candidates"])


def test_plan_rewrites_a_pasted_multi_line_launch_as_one(cli_json):
    """A launch pasted with backslash continuations (the web page's case) and vLLM's underscore spelling of a flag:
    the rewrite splits it as the parser does and replaces --max_model_len instead of keeping a second one."""
    code, d = cli_json("plan", "--engine", "vllm", "--gpu", "h200", "-L", "262144", "-C", "8", "--json", "--",
                       "vllm serve Qwen/Qwen3.5-27B \\\n  --max_model_len 4096 \\\n  --max-num-seqs 16")
    assert code == 0 and d["best"]["changes"] == {"--kv-cache-dtype": "fp8"}
    assert d["command"] == "vllm serve Qwen/Qwen3.5-27B --max-num-seqs 16 --kv-cache-dtype fp8 --max-model-len 262144"
    assert "--max-util caps it at 0.95" in d["measured"]["rule"]


def test_a_card_known_only_by_its_memory_is_sized_as_a_catalog_card_is(cli, cli_json):
    """--gpu-memory-gib alone (issue 26: it sized nothing, kv_cache_tokens null; plan demanded --gpu): the card-alone
    timeline on memory.total less the driver's reserve, an sm90 card's kernels and batch defaults, so the same
    numbers as an sm90 catalog card given that memory; the verdict's confidence says what a memory alone leaves
    unknown, and plan searches from it."""
    launch = "vllm serve Qwen/Qwen3.5-9B --max-model-len 32768"
    code, alone = cli_json("explain", "--engine", "vllm", "--gpu-memory-gib", "48", "--json", "--", launch)
    assert code == 0 and alone["kv_cache_tokens"] > 0 and alone["memory"]["source"] == "card"
    assert alone["platform"]["gpu_memory_gib"] == 48 and alone["platform"]["sm"] == 90
    assert alone["memory"]["timeline"]["total_gib"]["value"] == round((48 * 1024 - 494) / 1024, 3)
    code, h200 = cli_json("explain", "--engine", "vllm", "--gpu", "h200", "--gpu-memory-gib", "48", "--json", "--",
                          launch)
    assert code == 0
    for key in ("available_kv_memory_bytes", "num_blocks", "kv_cache_tokens", "block_size"):
        assert alone[key] == h200[key], key
    conf = alone["verdict"]["confidence"]
    assert conf["level"] == "extrapolated" and "known only by its memory" in conf["unknowns"][-1]
    assert "known only by its memory" not in h200["verdict"]["confidence"]["note"]
    code, out, _ = cli("explain", "--engine", "vllm", "--gpu-memory-gib", "48", "--", launch)
    assert code == 0 and "on a 48 GiB card: boots and serves" in out and "confidence: extrapolated" in out
    code, plan = cli_json("plan", "--engine", "vllm", "--gpu-memory-gib", "48", "-L", "32768", "-C", "4", "--json",
                          "--", "vllm serve Qwen/Qwen3.5-9B")
    assert code == 0 and plan["measured"]["source"] == "card" and plan["best"]["max_concurrency"] >= 4
    assert plan["verdict"]["serves"] and plan["verdict"]["confidence"]["level"] == "extrapolated"
    code, out, _ = cli("plan", "--engine", "vllm", "--gpu-memory-gib", "48", "-L", "32768", "-C", "4", "--",
                       "vllm serve Qwen/Qwen3.5-9B")
    assert code == 0 and "on the card: boots and serves" in out and "confidence: extrapolated" in out
    # where nothing fits (bf16 weights over the 48 GiB), the text names the cheapest change as the JSON does, and
    # the verdict on the launch at the target's length (explain's: the weights do not load)
    code, out, _ = cli("plan", "--engine", "vllm", "--gpu-memory-gib", "48", "-L", "32768", "-C", "8", "--",
                       "vllm serve Qwen/Qwen3.5-35B-A3B")
    text = " ".join(out.split())
    assert code == 1 and "cheapest change: --quantization fp8 (the weights quantized to FP8 as they load): 8 " in text
    assert "on the card, at the target's length: fails (weights)" in text and "confidence: extrapolated" in text
