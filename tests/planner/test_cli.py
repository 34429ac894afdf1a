"""`hybridplan ratio`, `plan` and `explain --gpu` as a user runs them: JSON payloads, exit codes, one-line errors."""

from __future__ import annotations

LAUNCH = ("python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.8-27B", "--kv-cache-dtype", "fp8_e4m3")
RATIO_KEYS = ("mamba_full_memory_ratio", "mamba_full_memory_ratio_text", "binding_pool", "max_mamba_cache_size_pin",
              "pin_fits", "slots_per_request", "draft_states_per_request", "state_bytes_per_slot", "kv_bytes_per_token",
              "formula", "reason")


def test_ratio_json(cli_json):
    code, d = cli_json("ratio", "--json", "--request-length", "5120", "--concurrency", "64", "--", *LAUNCH)
    assert code == 0 and all(k in d for k in RATIO_KEYS)
    assert d["mamba_full_memory_ratio_text"] == "4.59" and d["max_mamba_cache_size_pin"] == 320


def test_ratio_with_a_gpu_is_exact_and_checks_the_pin(cli_json):
    code, d = cli_json("ratio", "--json", "-L", "5120", "-C", "16", "--gpu", "h200", "--", *LAUNCH)
    assert code == 0 and d["budget"]["source"] == "estimate" and d["pin_fits"] is True
    assert d["at_ratio"]["max_mamba_cache_size"] >= 80 and d["binding_pool"] in ("state_pool", "kv_pool", "both")


def test_ratio_human_output_shows_the_formula(cli):
    code, out, _ = cli("ratio", "-L", "9216", "-C", "1", "--", *LAUNCH)
    assert code == 0 and "--mamba-full-memory-ratio 2.55" in out and "--max-mamba-cache-size 5" in out


def test_plan_json_and_exit_codes(cli_json, cli):
    code, d = cli_json("plan", "--json", "--model", "Qwen/Qwen3.8-27B", "--quant", "nvfp4", "--gpu", "rtx5090",
                       "--request-length", "9216", "--concurrency", "1", "--spec", "dflash")
    assert code == 0 and d["fits"] and d["command"].startswith("python -m sglang.launch_server")
    assert d["mem_fraction_static"] <= 0.88 and "--mamba-ssm-dtype bfloat16" in d["command"]  # the page's setting
    # the old switches are accepted, change nothing, and say so
    code, old = cli_json("plan", "--json", "--model", "Qwen/Qwen3.8-27B", "--quant", "nvfp4", "--gpu", "rtx5090",
                         "-L", "9216", "-C", "1", "--spec", "dflash", "--tune-mrr", "--tune-chunked-prefill")
    assert code == 0 and old["command"] == d["command"]
    assert [w for w in old["warnings"] if "deprecated" in w] == [
        "--tune-mrr is deprecated and does nothing: the request cap, prefill chunk, CUDA-graph batch size, SSM dtype "
        "and radix strategy are always searched",
        "--tune-chunked-prefill is deprecated and does nothing: the request cap, prefill chunk, CUDA-graph batch "
        "size, SSM dtype and radix strategy are always searched"]
    code, d = cli_json("plan", "--json", "--model", "Qwen/Qwen3.8-27B", "--gpu", "rtx5090", "-L", "9216", "-C", "1")
    assert code == 1 and not d["fits"] and d["cheapest_change"]
    code, out, _ = cli("plan", "--model", "Qwen/Qwen3.8-27B", "--quant", "fp8", "--gpu", "h200", "-L", "5120",
                       "-C", "8", "--", "--kv-cache-dtype", "fp8_e4m3")
    assert code == 0 and "--kv-cache-dtype fp8_e4m3" in out and "Memory breakdown" in out


def test_explain_with_a_gpu_and_with_boot_log_numbers(cli_json):
    code, d = cli_json("explain", "--json", "--gpu", "h100-80gb", "--", "python", "-m", "sglang.launch_server",
                       "--model-path", "Qwen/Qwen3.8-27B-FP8", "--mem-fraction-static", "0.85")
    assert code == 0 and d["memory"]["timeline"]["gpu"] == "h100-80gb" and d["max_mamba_cache_size"] > 0
    assert d["memory"]["weights"]["target_bytes_per_rank"]["source"] == "estimate"
    code, d = cli_json("explain", "--json", "--available-gib", "87.5", "--pre-load-gib", "139.3", "--",
                       "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.5-27B",
                       "--mem-fraction-static", "0.85")
    assert code == 0 and d["max_mamba_cache_size"] == 218 and d["max_total_num_tokens"] == 575_225
    code, d = cli_json("explain", "--json", "--gpu-memory-gib", "80", "--", *LAUNCH)
    assert code == 0 and d["memory"]["timeline"]["capacity_gib"]["source"] == "input"


def test_bad_input_is_one_line_and_exit_2(cli):
    code, _, err = cli("plan", "--model", "Qwen/Qwen3.8-27B", "--gpu", "tpu-v5", "-L", "1", "-C", "1")
    assert code == 2 and err.strip().startswith("error: unknown GPU") and "Traceback" not in err
    code, _, err = cli("ratio", "-L", "0", "-C", "1", "--", *LAUNCH)
    assert code == 2 and "positive" in err
    code, _, err = cli("explain", "--available-gib", "nan", "--", *LAUNCH)
    assert code == 2
    code, _, err = cli("plan", "--model", "Qwen/Qwen3.8-27B", "-L", "1", "-C", "1")
    assert code == 2 and "needs a GPU" in err


def test_plan_answers_a_launch_command_with_its_flags_kept(cli_json, cli):
    """`plan --gpu G -L L -C C -- <launch command>`: the model comes from --model-path, env and every flag stay; the
    text output names the engine default beside the recommendation and the confidence."""
    cmd = ("SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B-FP8 --kv-cache-dtype "
           "fp8_e4m3 --reasoning-parser qwen3 --port 30001").split()
    code, d = cli_json("plan", "--json", "--gpu", "h200", "-L", "5120", "-C", "103", "--", *cmd)
    assert code == 0 and d["fits"] and d["checkpoint"]["model_path"] == "Qwen/Qwen3.8-27B-FP8"
    assert d["command"].startswith("SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server")
    assert all(f in d["command"] for f in ("--kv-cache-dtype fp8_e4m3", "--reasoning-parser qwen3", "--port 30001"))
    assert {c["flag"] for c in d["changes"]} >= {"--mem-fraction-static"}
    assert d["mem_fraction_static"] <= 0.9 < 0.98  # the old answer for this target, beyond any evidence
    code, out, _ = cli("plan", "--gpu", "h200", "-L", "5120", "-C", "103", "--", *cmd)
    assert code == 0 and f"engine default {d['mem_fraction']['engine_default']}, recommended " \
        f"{d['mem_fraction_static']}" in " ".join(out.split())
    assert "confidence: " + d["confidence"]["level"] in out
    code, _, err = cli("plan", "--model", "Qwen/Qwen3.8-27B", "--gpu", "h200", "-L", "1", "-C", "1", "--", *cmd)
    assert code == 2 and "--model: the launch command after `--` already names the model" in err
    code, _, err = cli("plan", "--gpu", "h200", "-L", "1", "-C", "1", "--", *cmd, "--bogus", "1")
    assert code == 2 and err.strip() == "error: sglang serve: error: unrecognized arguments: --bogus 1"
