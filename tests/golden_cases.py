"""The golden cases (scripts/record_golden.py records them, tests/test_golden.py compares): the README's examples and
the `--json` answers of every command and web endpoint on both engines, so a refactor shows any output it changes."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures"

SGL_DSPARK = ("python -m sglang.launch_server --model-path RadixArk/Qwen3.8-27B-NVFP4 --kv-cache-dtype fp8_e4m3 "
              "--max-running-requests 1 --cuda-graph-max-bs-decode 1 --mem-fraction-static 0.9 "
              "--speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark "
              "--chunked-prefill-size 8192 --mamba-full-memory-ratio 11.93")
SGL_H200 = ("python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B-FP8 --kv-cache-dtype fp8_e4m3 "
            "--mem-fraction-static 0.85 --chunked-prefill-size 32768 --mamba-ssm-dtype float32 "
            "--mamba-full-memory-ratio 4.59")
SGL_27B = "python -m sglang.launch_server --model-path Qwen/Qwen3.5-27B --mem-fraction-static 0.85"
V_652 = ("vllm serve Qwen/Qwen3.6-35B-A3B --dtype bfloat16 --max-model-len 131072 --kv-cache-dtype fp8 "
         "--max-num-seqs 1")
V_KIMI = "vllm serve moonshotai/Kimi-Linear-48B-A3B-Instruct --max-model-len 131072"
V_TALOS = ("vllm serve Qwen/Qwen3.8-27B-FP8 -tp 2 --gpu-memory-utilization 0.92 --kv-cache-dtype fp8_e4m3 "
           "--max-num-batched-tokens 8192 --max-model-len 131072 --max-num-seqs 2")
V_27B = "vllm serve Qwen/Qwen3.8-27B --max-model-len 132000 --gpu-memory-utilization 0.9"
V_1087 = ("vllm serve Qwen/Qwen3.8-27B-FP8 --quantization fp8 -tp 2 --max-model-len 262144 --gpu-memory-utilization "
          "0.92 --max-num-seqs 2 --max-num-batched-tokens 8192 --kv-cache-dtype fp8 --enable-prefix-caching")
RTX4090_CMD = ("python -m sglang.launch_server --model-path Qwen/Qwen3.5-9B --tp-size 2 --mem-fraction-static 0.8 "
               "--context-length 262144")
V_NEMO = "vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --max-model-len 32768 --enable-prefix-caching"


def readme_cases() -> dict[str, dict[str, Any]]:
    """Every `$ hybridplan ...` line of the README, run as written."""
    text = (ROOT / "README.md").read_text()
    out: dict[str, dict[str, Any]] = {}
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith("$ hybridplan "):
                argv = shlex.split(line[2:].strip())[1:]
                out[f"readme {len(out):02d} {argv[0]}"] = {"cli": argv}
    return out


def json_cases() -> dict[str, dict[str, Any]]:
    """The `--json` answers of each command on both engines."""
    logs = sorted((FIX / "logs").glob("*.log"))
    vlogs = sorted((FIX / "vllm").glob("*.log"))
    checked = sorted((FIX / "logs" / "synthetic").glob("*.log")) + [FIX / "logs" / "qwen3.5-9b-tp2-rtx4090.log"]
    c: dict[str, dict[str, Any]] = {
        "explain sglang budget": {"cli": ["explain", "--json", "--pool-budget-gib", "66.50734375", "--", SGL_27B]},
        "explain sglang no budget": {"cli": ["explain", "--json", "--", SGL_27B]},
        "explain sglang rtx5090 dspark": {"cli": ["explain", "--json", "--gpu", "rtx5090", "--", SGL_DSPARK]},
        "explain sglang h200": {"cli": ["explain", "--json", "--gpu", "h200", "--", SGL_H200]},
        "explain sglang 0.5.19 h100": {"cli": ["explain", "--json", "--gpu", "h100-80gb", "--engine-version", "0.5.19",
                                               "--", SGL_H200]},
        "explain sglang bad flag": {"cli": ["explain", "--json", "--", SGL_27B + " --no-such-flag 1"]},
        "explain vllm 652": {"cli": ["explain", "--json", "--engine", "vllm", "--gpu", "rtx5090", "--kv-memory-gib",
                                     "6.01", "--", V_652]},
        "explain vllm kimi": {"cli": ["explain", "--json", "--engine", "vllm", "--gpu", "h200", "--kv-memory-gib", "40",
                                      "--", V_KIMI]},
        "explain vllm talos card": {"cli": ["explain", "--json", "--engine", "vllm", "--gpu", "rtx3090", "--", V_TALOS]},
        "explain vllm h100 27b": {"cli": ["explain", "--json", "--engine", "vllm", "--gpu", "h100-80gb", "--", V_27B]},
        "explain vllm no memory": {"cli": ["explain", "--json", "--engine", "vllm", "--", V_NEMO]},
        "explain vllm 0.24.0 nemotron": {"cli": ["explain", "--json", "--engine", "vllm", "--engine-version", "0.24.0",
                                                 "--kv-memory-gib", "20", "--", V_NEMO]},
        "explain vllm 0.20.0": {"cli": ["explain", "--json", "--engine", "vllm", "--engine-version", "0.20.0",
                                        "--kv-memory-gib", "6.01", "--", V_652]},
        "plan sglang command": {"cli": ["plan", "--json", "--gpu", "h200", "-L", "5120", "-C", "64", "--",
                                        *shlex.split(SGL_H200)]},
        "plan sglang model": {"cli": ["plan", "--json", "--model", "Qwen/Qwen3.8-27B", "--quant", "nvfp4", "--gpu",
                                      "rtx5090", "-L", "9216", "-C", "1", "--spec", "dflash"]},
        "plan sglang no fit": {"cli": ["plan", "--json", "--model", "Qwen/Qwen3.8-27B", "--gpu", "rtx3090", "-L",
                                       "32768", "-C", "1"]},
        "plan vllm boot": {"cli": ["plan", "--json", "--engine", "vllm", "--gpu", "rtx5090", "--kv-memory-gib", "6.01",
                                   "-L", "65536", "-C", "2", "--", V_652]},
        "plan vllm card": {"cli": ["plan", "--json", "--engine", "vllm", "--gpu", "h100-80gb", "-L", "32000", "-C",
                                   "8", "--", "vllm serve Qwen/Qwen3.8-27B --gpu-memory-utilization 0.9"]},
        "plan vllm 0.24.0 nemotron": {"cli": ["plan", "--json", "--engine", "vllm", "--engine-version", "0.24.0",
                                              "--gpu", "h100-80gb", "-L", "32768", "-C", "16", "--", V_NEMO]},
        "ratio": {"cli": ["ratio", "--json", "-L", "9216", "-C", "1", "--", "python -m sglang.launch_server "
                          "--model-path RadixArk/Qwen3.8-27B-NVFP4 --mamba-radix-cache-strategy extra_buffer_lazy"]},
        "compare memory": {"cli": ["compare", "--json", "--model", "Qwen/Qwen3.5-27B", "--memory-gib", "40", "-L",
                                   "131072"]},
        "compare card": {"cli": ["compare", "--json", "--model", "Qwen/Qwen3.6-35B-A3B", "--gpu", "h200", "-L",
                                 "131072"]},
        "compare fp8 0.24.0": {"cli": ["compare", "--json", "--model", "Qwen/Qwen3.5-9B", "--memory-gib", "20", "-L",
                                       "32768", "--kv-cache-dtype", "fp8", "--vllm-version", "0.24.0"]},
        "compare refused h100": {"cli": ["compare", "--json", "--model", "Qwen/Qwen3.5-35B-A3B", "--gpu", "h100-80gb",
                                         "-L", "32768"]},
        "compare launch h200": {"cli": ["compare", "--json", "--gpu", "h200", "-L", "5120", "--", SGL_H200]},
        "compare vllm launch": {"cli": ["compare", "--json", "--engine", "vllm", "--gpu-memory-gib", "48", "-L",
                                        "32768", "--", V_652]},
        "cookbook check": {"cli": ["cookbook", "check", "--json"]},
        "cookbook render": {"cli": ["cookbook", "render", "qwen3.8-27b", "--hw", "rtx5090", "--quant",
                                    "nvfp4-fp4-head", "--spec", "dflash", "--json"]},
        "cookbook export jsx": {"cli": ["cookbook", "export", "kimi-k3", "--format", "sglang-jsx"]},
        "models": {"cli": ["models", "--json"]},
    }
    for p in logs:
        c[f"logs parse {p.name}"] = {"cli": ["logs", "parse", "--json", str(p.relative_to(ROOT))]}
    for p in checked:
        launch = json.loads(Path(str(p) + ".json").read_text())["launch"]["command_verbatim"] or RTX4090_CMD
        launch = launch.split("2>&1")[0].replace("\\\n", " ")
        c[f"logs check {p.name}"] = {"cli": ["logs", "check", "--json", "--log-version", "dev",
                                             str(p.relative_to(ROOT)), "--", *shlex.split(launch)]}
    for p in vlogs:
        c[f"logs check vllm {p.name}"] = {"cli": ["logs", "check", "--json", "--engine", "vllm", "--gpu", "rtx5090",
                                                  str(p.relative_to(ROOT))] + (["--", V_1087] if "1087" in p.name else [])}
    c["web explain sglang"] = {"web": "/api/explain", "body": {"command": SGL_DSPARK, "gpu": "rtx5090"}}
    c["web explain vllm"] = {"web": "/api/explain", "body": {"command": V_652, "engine": "vllm", "gpu": "rtx5090",
                                                             "kv_memory_gib": 6.01}}
    c["web plan vllm"] = {"web": "/api/plan", "body": {"command": V_652, "engine": "vllm", "gpu": "rtx5090",
                                                       "kv_memory_gib": 6.01, "request_length": 65536,
                                                       "concurrency": 2}}
    c["web plan sglang"] = {"web": "/api/plan", "body": {"command": SGL_H200, "gpu": "h200", "request_length": 5120,
                                                         "concurrency": 64}}
    c["web compare"] = {"web": "/api/compare", "body": {"model": "Qwen/Qwen3.6-35B-A3B", "gpu": "h200",
                                                        "request_length": 131072}}
    c["web logs check vllm"] = {"web": "/api/logs/check", "body": {
        "log": (FIX / "vllm" / "club3090-652-rtx5090.log").read_text(), "engine": "vllm", "gpu": "rtx5090"}}
    c["web logs check sglang"] = {"web": "/api/logs/check", "body": {
        "log": checked[-1].read_text(), "command": RTX4090_CMD, "log_version": "dev"}}
    return c


def cases() -> dict[str, dict[str, Any]]:
    return readme_cases() | json_cases()


def run_case(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one case: its exit (or HTTP status) and its output (parsed JSON where it is JSON)."""
    if "cli" in spec:
        from typer.testing import CliRunner

        from hybridplan.cli import app

        res = CliRunner().invoke(app, spec["cli"], env={"COLUMNS": "200"})
        return {"exit": res.exit_code, "out": _maybe_json(res.stdout), "err": res.stderr.replace(str(ROOT), "<ROOT>")}
    from fastapi.testclient import TestClient

    from hybridplan.web.app import create_app

    client = TestClient(create_app(), base_url="http://127.0.0.1:8000")
    r = client.post(spec["web"], json=spec["body"])
    return {"exit": r.status_code, "out": _maybe_json(r.text), "err": ""}


def _maybe_json(text: str) -> Any:
    """Parsed JSON where the output is JSON, else the text; the checkout's own path reads <ROOT> (CI clones elsewhere)."""
    text = text.replace(str(ROOT), "<ROOT>")
    try:
        return json.loads(text)
    except ValueError:
        return text
