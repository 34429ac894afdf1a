"""`hybridplan fleet`: the JSON answer, the manifest alone, no layout within the GPUs available (exit 1) and bad input
(exit 2, one line)."""

from __future__ import annotations

import yaml

SMALL = ("fleet", "--model", "Qwen/Qwen3.5-9B", "--gpu", "h100-80gb", "-L", "32768", "-C", "64", "--gpus-available", "4")


def test_the_json_answer_ranks_both_engines_and_launches_the_first_row(cli_json):
    code, d = cli_json(*SMALL, "--json")
    assert code == 0 and d["engines"] == {"sglang": "0.5.23", "vllm": "0.33.0"}
    assert {r["engine"] for r in d["rows"]} == {"sglang", "vllm"}
    gpus = [r["gpus"] for r in d["rows"] if r["feasible"]]
    assert gpus == sorted(gpus) and d["chosen"] == 1
    first = d["rows"][0]
    assert first["requests_per_server"] * first["servers_total"] >= 64 and first["sessions"] >= 64
    assert d["launch"]["engine"] == first["engine"] and d["launch"]["layout"] == first["layout"]
    assert all(rank["serves"] for role in d["launch"]["roles"] for rank in role["ranks"])
    assert d["manifests"]["compose"] is not None and d["manifests"]["compose_why"] is None


def test_the_manifest_alone_is_a_yaml_stream_for_kubectl(cli):
    code, out, _ = cli(*SMALL, "--manifest", "k8s")
    assert code == 0
    kinds = [doc["kind"] for doc in yaml.safe_load_all(out)]
    assert kinds == ["Deployment", "Service"]


def test_no_layout_within_the_gpus_available_is_a_finding_with_the_numbers(cli_json, cli):
    code, d = cli_json("fleet", "--model", "Qwen/Qwen3.5-9B", "--gpu", "h100-80gb", "-L", "32768", "-C", "5000",
                       "--gpus-available", "2", "--engine", "sglang", "--json")
    assert code == 1 and d["launch"] is None and not any(r["feasible"] for r in d["rows"])
    assert d["why"].startswith("no layout serves 5000 sessions of 32,768 tokens on 2 GPUs: the fewest that do need ")
    code, out, _ = cli("fleet", "--model", "Qwen/Qwen3.5-9B", "--gpu", "h100-80gb", "-L", "32768", "-C", "5000",
                       "--gpus-available", "2", "--engine", "sglang")
    assert code == 1 and "no layout chosen" in out


def test_bad_input_is_one_line_and_exit_2(cli):
    code, _, err = cli(*SMALL, "--engine", "tgi")
    assert code == 2 and err == "error: --engine: 'tgi' is not modelled (sglang, vllm or both)\n"
    code, _, err = cli(*SMALL, "--pick", "999")
    assert code == 2 and err.startswith("error: --pick: row 999 is not a feasible layout")
    code, _, err = cli(*SMALL, "--manifest", "helm")
    assert code == 2 and err == "error: --manifest: 'helm' (choose k8s or compose)\n"
