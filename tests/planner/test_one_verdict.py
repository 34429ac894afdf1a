"""One verdict, computed once (issue 26, item 3): what a warning says graph capture needs is the verdict's
`capture_need_gib`, and a plan carries the verdict (and vLLM's startup checks) explain gives its planned launch."""

from __future__ import annotations

import re
import shlex

from golden_cases import SGL_DSPARK


def test_the_warning_states_the_verdicts_capture_need(cli_json, cli, monkeypatch):
    """The README's DSpark command: the verdict says graph capture needs 4.23 GiB (serving 5.87), and the warning the
    CLI prints and the page shows said 5.59 (the slack need without the margin, a third figure); now each GiB figure
    it states is one of the verdict's."""
    code, d = cli_json("explain", "--json", "--gpu", "rtx5090", "--", SGL_DSPARK)
    v = d["memory"]["verdict"]
    assert code == 0 and (round(v["capture_need_gib"], 2), round(v["serve_need_gib"], 2)) == (4.23, 5.87)
    warning = next(w for w in d["memory"]["warnings"] if "graph capture" in w)
    assert f"graph capture needs {v['capture_need_gib']:.2f} GiB" in warning
    assert f"the first requests {v['serve_need_gib']:.2f} GiB" in warning
    figures = {float(x) for x in re.findall(r"(\d+\.\d+) GiB", warning)}
    assert figures == {round(v["slack_gib"], 2), round(v["capture_need_gib"], 2), round(v["serve_need_gib"], 2),
                       d["memory"]["timeline"]["margin_gib"]["value"]}
    assert warning.endswith("expect an out-of-memory error at graph capture; the highest safe fraction is about 0.809")
    monkeypatch.setenv("COLUMNS", "400")  # each line whole
    code, out, _ = cli("explain", "--gpu", "rtx5090", "--", SGL_DSPARK)
    said = [line for line in out.splitlines() if line.startswith(("on rtx5090:", "warning:"))]
    assert len(said) == 2 and all("4.23 GiB" in line and "5.59" not in line for line in said)


def test_a_vllm_plan_carries_the_verdict_explain_gives_its_launch(cli_json):
    """plan --engine vllm: its `verdict` and `checks` are explain --engine vllm's on the planned command on the same
    card (the card alone), confidence included; when nothing serves, the launch at the target's length."""
    code, p = cli_json("plan", "--json", "--engine", "vllm", "--gpu", "h100-80gb", "-L", "32000", "-C", "8", "--",
                       "vllm serve Qwen/Qwen3.8-27B --gpu-memory-utilization 0.9")
    assert code == 0 and p["fits"]
    code, e = cli_json("explain", "--json", "--engine", "vllm", "--gpu", "h100-80gb", "--", p["command"])
    assert code == 0 and p["verdict"] == e["verdict"] and p["checks"] == e["checks"]
    assert p["verdict"]["serves"] and p["verdict"]["confidence"]["level"] == "extrapolated"
    assert [c["phase"] for c in p["checks"]] == ["config", "free_memory", "weights", "kv_cache", "cuda_graph"]
    code, p = cli_json("plan", "--json", "--engine", "vllm", "--gpu", "h100-80gb", "-L", "32000", "-C", "500", "--",
                       "vllm serve Qwen/Qwen3.8-27B --gpu-memory-utilization 0.9")
    assert code == 1 and not p["fits"] and p["verdict"]["serves"] is False
    assert p["verdict"]["why"] == p["baseline"]["verdict"]["why"] and p["verdict"]["message"].startswith(
        "max_num_seqs (1024) exceeds available Mamba cache blocks (286)")


def test_a_vllm_plan_from_a_boot_says_what_its_verdict_rests_on(cli_json):
    """From one measured boot: at the boot's own utilization the pool is measured; at another it is the boot's
    memory moved by the requested share (calibrated)."""
    launch = ("vllm serve Qwen/Qwen3.6-35B-A3B --dtype bfloat16 --max-model-len 131072 --kv-cache-dtype fp8 "
              "--max-num-seqs 1")
    code, p = cli_json("plan", "--json", "--engine", "vllm", "--gpu", "rtx5090", "--kv-memory-gib", "6.01", "-L",
                       "65536", "-C", "2", "--", *shlex.split(launch))
    assert code == 0
    moved = "--gpu-memory-utilization" in p["best"]["changes"]
    assert p["verdict"]["confidence"]["level"] == ("calibrated" if moved else "measured")
