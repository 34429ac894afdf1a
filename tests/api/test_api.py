"""The Python API answers exactly what the CLI's --json prints (the same run_* functions under both), and its typed
accessors read the payload's own fields."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import hybridplan
from hybridplan import BadInput

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "fixtures" / "logs" / "qwen3.5-9b-tp2-rtx4090.log"
LOG_CMD = ("python -m sglang.launch_server --model-path Qwen/Qwen3.5-9B --tp-size 2 --mem-fraction-static 0.8 "
           "--context-length 262144")
VLOG = ROOT / "tests" / "fixtures" / "vllm" / "club3090-652-rtx5090.log"
FAILS_5090 = ("python -m sglang.launch_server --model-path RadixArk/Qwen3.8-27B-NVFP4 --kv-cache-dtype fp8_e4m3 "
              "--mem-fraction-static 0.97")
V_652 = ("vllm serve Qwen/Qwen3.6-35B-A3B --dtype bfloat16 --max-model-len 131072 --kv-cache-dtype fp8 "
         "--max-num-seqs 1")


def _same(cli, argv: list[str], result) -> dict:
    """The CLI's --json for argv is the result's to_json(), character for character, with the same exit code."""
    code, out, err = cli(*argv)
    assert out == result.to_json() + "\n", err
    assert code == result.exit_code
    return json.loads(out)


def test_explain_on_a_card_is_the_cli_s_json_and_its_verdict(cli):
    result = hybridplan.explain(FAILS_5090, gpu="rtx5090")
    payload = _same(cli, ["explain", "--json", "--gpu", "rtx5090", "--", FAILS_5090], result)
    v = payload["memory"]["verdict"]
    assert (result.engine, result.engine_version, result.command) == ("sglang", "0.5.23", FAILS_5090)
    assert result.verdict == hybridplan.Verdict(serves=False, phase="cuda_graph", message=v["why"],
                                                confidence=v["confidence"]["level"], evidence=v["confidence"]["note"])
    assert result.verdict.phase == "cuda_graph" and result.verdict.confidence == "extrapolated"


def test_explain_takes_the_launch_s_words_as_the_cli_does(cli):
    words = shlex.split(FAILS_5090)
    result = hybridplan.explain(words, gpu="rtx5090", engine_version="0.5.21")
    _same(cli, ["explain", "--json", "--gpu", "rtx5090", "--engine-version", "0.5.21", "--", *words], result)
    assert result.engine_version == "0.5.21" and result.command == FAILS_5090


def test_explain_vllm_from_a_boot_log_s_memory(cli):
    result = hybridplan.explain(V_652, engine="vllm", gpu="rtx5090", kv_memory_gib=6.01)
    payload = _same(cli, ["explain", "--json", "--engine", "vllm", "--gpu", "rtx5090", "--kv-memory-gib", "6.01",
                          "--", V_652], result)
    assert (result.engine, result.engine_version) == ("vllm", "0.33.0")
    assert payload["kv_cache_tokens"] > 0 and result.refusal is None


def test_a_refusal_in_the_payload_is_the_verdict_and_exit_3(cli):
    cmd = "python -m sglang.launch_server --model-path Qwen/Qwen3.5-27B"
    result = hybridplan.explain(cmd, pool_budget_gib=-1)
    payload = _same(cli, ["explain", "--json", "--pool-budget-gib", "-1", "--", cmd], result)
    assert result.exit_code == 3 and result.refusal == payload["error"]
    assert result.verdict == hybridplan.Verdict(serves=False, phase="startup",
                                                message="the engine refuses: " + payload["error"]["message"],
                                                rule=payload["error"]["rule"])


def test_an_engine_refusal_comes_back_with_its_verdict_as_the_cli_exits_3(cli):
    """A launch vLLM would refuse at startup (KV too small for one max_model_len request on an RTX 4090) is an
    answer, not an exception: the verdict names the phase and vLLM's message, exit 3 as the CLI's."""
    cmd = "vllm serve Qwen/Qwen3.5-9B --max-model-len 262144"
    got = hybridplan.explain(cmd, engine="vllm", gpu="rtx4090")
    assert got.exit_code == 3 and got.verdict is not None and not got.verdict.serves
    assert got.verdict.phase == "kv_cache" and "refuses to start: To serve at least one request" in got.verdict.message
    code, out, _ = cli("explain", "--json", "--engine", "vllm", "--gpu", "rtx4090", "--", cmd)
    assert code == 3 and json.loads(out) == json.loads(got.to_json())


def test_an_option_the_engine_does_not_take_is_refused_by_its_keyword(cli):
    with pytest.raises(BadInput) as raised:
        hybridplan.explain(V_652, engine="vllm", pool_budget_gib=10)
    assert raised.value.message == "pool_budget_gib: not taken with `engine: vllm` (only with `engine: sglang`)"
    code, _, err = cli("explain", "--engine", "vllm", "--pool-budget-gib", "10", "--", V_652)
    assert code == 2 and "--pool-budget-gib: not taken with `engine: vllm`" in err  # the CLI names its flag


def test_plan_is_the_cli_s_json(cli):
    result = hybridplan.plan(FAILS_5090, request_length=8192, concurrency=8, gpu="rtx5090")
    payload = _same(cli, ["plan", "--json", "--gpu", "rtx5090", "-L", "8192", "-C", "8", "--", FAILS_5090], result)
    assert result.fits is True and result.command == payload["command"]
    assert "--mem-fraction-static 0.9 " in result.command
    assert (result.request_length, result.concurrency, result.engine) == (8192, 8, "sglang")


def test_plan_that_does_not_fit_exits_1(cli):
    result = hybridplan.plan(model="Qwen/Qwen3.8-27B", gpu="rtx3090", request_length=32768, concurrency=1)
    payload = _same(cli, ["plan", "--json", "--model", "Qwen/Qwen3.8-27B", "--gpu", "rtx3090", "-L", "32768", "-C",
                          "1"], result)
    assert result.fits is False and result.command is None and result.exit_code == 1 and payload["why"]


def test_plan_vllm_and_a_launch_beside_a_model_is_refused(cli):
    result = hybridplan.plan(V_652, engine="vllm", gpu="rtx5090", kv_memory_gib=6.01, request_length=65536,
                             concurrency=2)
    _same(cli, ["plan", "--json", "--engine", "vllm", "--gpu", "rtx5090", "--kv-memory-gib", "6.01", "-L", "65536",
                "-C", "2", "--", V_652], result)
    assert result.engine == "vllm" and result.fits == result.payload["fits"]
    with pytest.raises(BadInput, match="give the launch command or `model`"):
        hybridplan.plan(FAILS_5090, model="Qwen/Qwen3.8-27B", gpu="rtx5090", request_length=8192, concurrency=1)


def test_compare_is_the_cli_s_json(cli):
    result = hybridplan.compare("Qwen/Qwen3.5-9B", memory_gib=20, request_length=32768, kv_cache_dtype="fp8",
                                versions={"vllm": "0.24.0"})
    payload = _same(cli, ["compare", "--json", "--model", "Qwen/Qwen3.5-9B", "--memory-gib", "20", "-L", "32768",
                          "--kv-cache-dtype", "fp8", "--vllm-version", "0.24.0"], result)
    assert result.versions == {"sglang": "0.5.23", "vllm": "0.24.0"} and result.engines == ("sglang", "vllm")
    assert result.leg("vllm") == payload["vllm"] and result.why == payload["why"]


def test_check_log_reads_a_path_or_takes_the_text(cli):
    by_path = hybridplan.check_log(LOG, LOG_CMD, log_version="dev")
    payload = _same(cli, ["logs", "check", "--json", "--log-version", "dev", str(LOG), "--", LOG_CMD], by_path)
    by_text = hybridplan.check_log(LOG.read_text(), shlex.split(LOG_CMD), log_version="dev")
    assert by_text.payload == payload and by_path.explained is True and by_path.engine == "sglang"


def test_check_log_vllm(cli):
    result = hybridplan.check_log(VLOG, engine="vllm", gpu="rtx5090")
    _same(cli, ["logs", "check", "--json", "--engine", "vllm", "--gpu", "rtx5090", str(VLOG)], result)
    assert result.engine == "vllm" and result.engine_version is None and result.explained is True


def test_the_public_names_resolve_and_are_listed():
    from hybridplan.api import calls, preflight, results

    assert hybridplan.explain is calls.explain and hybridplan.Preflight is preflight.Preflight
    assert hybridplan.Verdict is results.Verdict
    assert sorted(hybridplan.__all__) == sorted(["__version__", "explain", "plan", "compare", "check_log",
                                                 "preflight", "Explanation", "Plan", "Comparison", "LogCheck",
                                                 "Verdict", "Preflight", "HybridPlanError", "BadInput",
                                                 "EngineRefusal"])
    assert set(hybridplan.__all__) <= set(dir(hybridplan))
    assert not hasattr(hybridplan, "fleet")  # public once it lands


def test_the_version_is_the_package_s():
    import tomllib

    assert hybridplan.__version__ == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_import_hybridplan_loads_no_layer():
    """`import hybridplan` is cheap: the API's names load on first use."""
    probe = "import sys, json, hybridplan; print(json.dumps(sorted(m for m in sys.modules if 'hybridplan' in m)))"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert json.loads(proc.stdout) == ["hybridplan", "hybridplan.version"]
    star = "from hybridplan import *; print(explain.__module__, Plan.__name__)"
    proc = subprocess.run([sys.executable, "-c", star], capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["hybridplan.api.calls", "Plan"], proc.stderr


def test_a_top_level_verdict_is_read_before_the_memory_timeline_s():
    """An engine may put its verdict at the top of the payload (the neutral place) rather than under `memory`."""
    top = {"serves": False, "phase": "kv_pool", "why": "too few blocks", "confidence": {"level": "calibrated",
                                                                                         "note": "n"}}
    payload = {"verdict": top, "memory": {"verdict": {"serves": True, "phase": None, "why": "fits"}}}
    ex = hybridplan.Explanation(payload=payload, engine="e", engine_version="1", command="c")
    assert ex.verdict == hybridplan.Verdict(serves=False, phase="kv_pool", message="too few blocks",
                                            confidence="calibrated", evidence="n")
    bare = hybridplan.Explanation(payload={"verdict": {**top, "confidence": "calibrated"}}, engine="e",
                                  engine_version="1", command="c")
    assert bare.verdict.confidence == "calibrated" and bare.verdict.evidence is None
    assert hybridplan.Explanation(payload={}, engine="e", engine_version="1", command="c").verdict is None
