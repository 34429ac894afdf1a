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
