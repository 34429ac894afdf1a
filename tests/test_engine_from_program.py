"""A launch picks its engine by the server program it runs (engine.api.launched_by): `vllm serve ...` is vLLM's
explain, plan and guard without `--engine`; sglang's launchers and a bare flag list are sglang's; `--engine` wins."""

from __future__ import annotations

import pytest

from hybridplan import explain, plan
from hybridplan.engine.api import launched_by

VLLM = "vllm serve Qwen/Qwen3.8-27B --max-model-len 132000 --gpu-memory-utilization 0.9"


@pytest.mark.parametrize("command, engine", [
    (VLLM, "vllm"),
    ("VLLM_USE_V1=1 /opt/venv/bin/vllm serve Qwen/Qwen3.8-27B", "vllm"),
    (("env", "CUDA_VISIBLE_DEVICES=0", "python3.12", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"), "vllm"),
    ("python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B", "sglang"),
    ("sglang serve Qwen/Qwen3.8-27B", "sglang"),
    ("--model-path Qwen/Qwen3.8-27B", "sglang"),  # bare flags: the first engine
    ("", "sglang"),
    ("'unterminated", "sglang"),  # not even split: the first engine's parser names why
])
def test_the_program_names_the_engine(command, engine):
    assert launched_by(command) == engine
    assert launched_by(command, "vllm") == "vllm"  # --engine wins


def test_explain_plan_and_the_cli_take_a_vllm_launch_without_engine(cli_json):
    e = explain(VLLM, gpu="h100-80gb")
    assert e.engine == "vllm" and e.payload["verdict"]["phase"] == "cuda_graph" and e.payload["num_blocks"] == 286
    p = plan(VLLM, request_length=32000, concurrency=8, gpu="h100-80gb")
    assert p.engine == "vllm" and p.payload["verdict"]["serves"]
    code, out = cli_json("explain", "--json", "--gpu", "h100-80gb", "--", *VLLM.split())
    assert code == 3 and out["engine"]["name"] == "vllm" and out["verdict"]["num_blocks"] == 286


def test_a_log_picks_the_engine_that_wrote_it(cli_json):
    """Without --engine, logs parse / check read a vLLM boot log as vLLM's (its own lines), an sglang one as sglang's;
    a log with neither engine's lines is the first engine's, whose check names the lines it lacks."""
    from pathlib import Path

    from hybridplan import check_log
    from hybridplan.engine.api import written_by

    fixtures = Path(__file__).resolve().parent / "fixtures"
    vllm_log = fixtures / "vllm" / "club3090-652-rtx5090.log"
    assert written_by(vllm_log.read_text()) == "vllm" and written_by("GET / 200\n") == "sglang"
    assert written_by(vllm_log.read_text(), "sglang") == "sglang"  # --engine wins (and is then refused by name)
    code, out = cli_json("logs", "check", "--json", str(vllm_log))
    assert code == 0 and out["engine"] == "vllm" and out["explained"] and out["checks"][-1]["logged"] == "4.35"
    assert check_log(vllm_log).engine == "vllm"
    code, out = cli_json("logs", "parse", "--json", str(fixtures / "vllm" / "failures" / "capture-oom.log"))
    assert code == 0 and out["failure"]["type"] == "torch.OutOfMemoryError"
