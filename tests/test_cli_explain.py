"""`hybridplan explain` as a user runs it: JSON keys, resolved args with provenance, exit codes, no tracebacks."""

from __future__ import annotations

import subprocess
import sys

import pytest

REQUIRED = ("state_bytes_per_slot", "kv_bytes_per_token", "slots_per_request", "draft_states_per_request",
            "max_mamba_cache_size", "kv_budget_bytes", "max_total_num_tokens", "max_running_requests",
            "binding_limit", "warnings", "args")
ARG_KEYS = ("mamba_radix_cache_strategy", "disable_overlap_schedule", "speculative_algorithm",
            "speculative_num_draft_tokens", "speculative_num_steps", "speculative_eagle_topk", "max_running_requests",
            "mamba_ssm_dtype", "kv_cache_dtype", "mem_fraction_static")


def test_json_payload_with_budget(cli_json):
    code, d = cli_json("explain", "--json", "--pool-budget-gib", "38.2", "--", "SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1",
                       "sglang", "serve", "Qwen/Qwen3.8-27B", "--mamba-radix-cache-strategy", "extra_buffer_lazy",
                       "--speculative-algorithm", "DSPARK", "--speculative-draft-model-path", "RadixArk/Qwen3.8-27B-DSpark")
    assert code == 0
    assert all(k in d for k in REQUIRED) and all(k in d["args"] for k in ARG_KEYS)
    assert d["slots_per_request"] == 3 and d["draft_states_per_request"] == 8
    assert d["args"]["speculative_num_draft_tokens"]["source"] == "derived"
    assert d["args"]["mamba_radix_cache_strategy"] == {"value": "extra_buffer_lazy", "source": "explicit",
                                                       "rule": "--mamba-radix-cache-strategy"}
    assert d["args"]["max_running_requests"]["value"] == 48
    assert any("reset to 48" in w for w in d["warnings"])
    # DSPARK draft: 8 KV heads x (128 + 128) x 5 layers x bf16 on top of the target's 65,536
    assert d["kv_bytes_per_token"] == 65_536 + 20_480
    assert d["provenance"]["state_bytes_per_slot"]["source"] == "engine rule"


def test_without_budget_pool_figures_are_null(cli_json):
    code, d = cli_json("explain", "--json", "--", "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.8-27B",
                       "--mamba-radix-cache-strategy", "auto", "--disable-radix-cache")
    assert code == 0 and d["max_mamba_cache_size"] is None and d["state_bytes_per_slot"] == 153_944_064
    assert d["args"]["mamba_radix_cache_strategy"]["value"] == "auto"  # radix off: auto stays auto
    assert any("No pool budget" in w for w in d["warnings"])


def test_engine_refusal_exits_3_with_the_engine_message(cli_json):
    code, d = cli_json("explain", "--json", "--pool-budget-gib", "-7.96", "--", "--model-path", "Qwen/Qwen3.8-27B-FP8")
    assert code == 3
    assert d["error"]["message"].startswith("Not enough GPU memory for hybrid (mamba/linear-attention) state cache.")
    assert "mamba_cache_per_req=146.81 MB" in d["error"]["message"]  # as in the MI355X boot log


@pytest.mark.parametrize("argv,code,msg", [
    (["explain", "--", "--model-path", "Qwen/Qwen3.8-27B", "--speculative-algorithm", "MTP"], 3,
     "Unknown speculative algorithm name: MTP"),
    (["explain", "--", "--model-path", "Qwen/Qwen3.8-27B", "--tp-size", "x"], 2, "invalid int value"),
    (["explain", "--", "--model-path", "nowhere/none"], 2, "not found"),
    (["explain", "--", "--tp", "2"], 2, "required: --model-path"),
    (["explain"], 2, "no launch command"),
    (["explain", "--pool-budget-gib", "nan", "--", "--model-path", "Qwen/Qwen3.8-27B"], 2, "finite"),
])
def test_bad_input_is_one_line(cli, argv, code, msg):
    got, out, err = cli(*argv)
    assert got == code
    assert msg in err and "Traceback" not in err + out
    assert len(err.strip().splitlines()) <= 2


def test_malformed_config_file(cli, tmp_path):
    (tmp_path / "config.json").write_text("{")
    got, out, err = cli("explain", "--", "--model-path", str(tmp_path))
    assert got == 2 and "malformed config.json" in err and "Traceback" not in err


def test_python_m_entry_point():
    res = subprocess.run([sys.executable, "-m", "hybridplan", "explain", "--json", "--", "--model-path",
                          "moonshotai/Kimi-K3", "--tp-size", "8"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert '"state_bytes_per_slot": 56171520' in res.stdout


def test_cli_start_does_not_import_heavy_modules():
    code = ("import sys, hybridplan.cli; bad = [m for m in ('torch', 'sglang', 'transformers', 'fastapi', "
            "'huggingface_hub', 'numpy') if m in sys.modules]; print(','.join(bad))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == ""


LAZY = ("--", "--model-path", "Qwen/Qwen3.8-27B-FP8", "--mamba-radix-cache-strategy", "extra_buffer_lazy")
# kv_cache_configurator.py::_calculate_mamba_ratio asserts after resolution: lazy slots need the overlap schedule,
# whether the flag turns it off or overrides.py::_pipeline_parallel_overlap_disable does for --pp-size 2
LAZY_CASES = [(("--disable-overlap-schedule",), "explicit", "--disable-overlap-schedule", 65_536),
              (("--pp-size", "2"), "derived", "overrides.py::_pipeline_parallel_overlap_disable", 32_768)]
LAZY_REFUSAL = "Lazy extra buffer requires overlap schedule (--disable-overlap-schedule is incompatible)"


@pytest.mark.parametrize("extra,source,rule,kv", LAZY_CASES)
def test_refusal_at_sizing_still_reports_the_resolved_arguments(cli_json, extra, source, rule, kv):
    code, d = cli_json("explain", "--json", "--gpu", "h200", *LAZY, *extra)
    assert code == 3
    assert d["error"] == {"message": LAZY_REFUSAL, "type": "AssertionError",
                          "rule": "mem_cache/kv_cache_configurator.py::_calculate_mamba_ratio"}
    assert d["args"]["disable_overlap_schedule"] == {"value": True, "source": source, "rule": rule}
    assert d["args"]["mamba_radix_cache_strategy"]["value"] == "extra_buffer_lazy"
    assert d["args"]["attention_backend"]["value"] == "fa3"
    # S is what the engine refuses to compute; D, state/slot and KV/token (stage 0's 16 or 8 layers) still are
    assert d["slots_per_request"] is None and LAZY_REFUSAL in d["provenance"]["slots_per_request"]["note"]
    assert (d["draft_states_per_request"], d["state_bytes_per_slot"], d["kv_bytes_per_token"]) == (0, 153_944_064, kv)
    assert d["max_mamba_cache_size"] is None and d["pool_budget_gib"] is None and "memory" not in d


@pytest.mark.parametrize("extra,source,rule,kv", LAZY_CASES)
def test_refusal_at_sizing_in_text_lists_the_resolved_arguments(cli, extra, source, rule, kv):
    code, out, _ = cli("explain", "--pool-budget-gib", "40", *LAZY, *extra)
    assert code == 3
    flat = " ".join(out.split())  # rich wraps long lines
    assert f"engine refuses to start: {LAZY_REFUSAL}" in flat and "153,944,064 B" in flat and f"{kv:,} B" in flat
    assert "disable_overlap_schedule = True (" + source + (f" by {rule})" if source == "derived" else ")") in flat
    assert "mamba_radix_cache_strategy = 'extra_buffer_lazy' (explicit)" in flat


@pytest.mark.parametrize("version,slots", [("0.5.18", 3), ("0.5.19", 5), ("0.5.20", 5), ("0.5.21", 5), ("0.5.22", 5),
                                           ("0.5.23", 5)])
def test_engine_version_models_that_release(cli_json, version, slots):
    """Text-only Qwen3.5-family (Qwen3_5MoeForCausalLM) gets the radix tracking slots from 0.5.19."""
    code, d = cli_json("explain", "--json", "--engine-version", version, "--pool-budget-gib", "40", "--",
                       "sglang", "serve", "Qwen/Qwen3.8-2.4T-A95B", "--tp", "8")
    assert code == 0
    assert d["engine"]["version"] == version and d["slots_per_request"] == slots


def test_engine_version_refusals(cli_json):
    code, d = cli_json("explain", "--json", "--engine-version", "0.5.17", "--pool-budget-gib", "40", "--",
                       "sglang", "serve", "Qwen/Qwen3.5-9B")
    assert code == 2 and d["error"]["message"].startswith("unsupported engine version '0.5.17'; supported: 0.5.18")
    code, d = cli_json("explain", "--json", "--engine-version", "0.5.20", "--pool-budget-gib", "40", "--",
                       "sglang", "serve", "Qwen/Qwen3.5-9B", "--cuda-graph-bs", "1", "2")
    assert code == 2 and d["error"]["message"] == ("sglang serve: error: ambiguous option: --cuda-graph-bs could "
                                                   "match --cuda-graph-bs-decode, --cuda-graph-bs-prefill")
    code, d = cli_json("explain", "--json", "--engine-version", "0.5.19", "--pool-budget-gib", "40", "--",
                       "sglang", "serve", "Qwen/Qwen3.5-9B", "--cuda-graph-bs", "1", "2")
    assert code == 0 and d["engine"]["version"] == "0.5.19"
