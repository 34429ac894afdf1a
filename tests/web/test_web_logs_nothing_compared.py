"""Nothing compared is a failure (issue 26): `logs parse` and `logs check`, on both engines and on the CLI and the
API, never pass on an empty, unrelated, foreign-engine or truncated log; they name the lines they needed and did
not find. Exit codes (README): 2 (HTTP 400) when the log holds none of the engine's lines, 1 (200, `explained:
false`) when it holds some but not those a check compares; a failure names its root error, not what chained it."""

from __future__ import annotations

import json
import shlex

import pytest

from tests.conftest import FIXTURES

SYNTH = FIXTURES / "logs" / "synthetic"
SGL_OK = (SYNTH / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-ok.log").read_text()
SGL_CMD = shlex.split(json.loads((SYNTH / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-ok.log.json").read_text())[
    "launch"]["command_verbatim"])
V_OK = (FIXTURES / "vllm" / "club3090-652-rtx5090.log").read_text()
V_FAILED = FIXTURES / "vllm" / "failures"
LOGS = {"sglang": SGL_OK, "vllm": V_OK}
OTHER = {"sglang": "vllm", "vllm": "sglang"}


def _cut_before(text: str, marker: str) -> str:
    return text[:text.index(marker)]


TRUNCATED = {"sglang": _cut_before(SGL_OK, "[2026-08-22 10:00:41] Mamba Cache"),
             "vllm": _cut_before(V_OK, "(EngineCore pid=107) INFO 07-09 02:58:11 [gpu_worker.py:508] Available")}


def _argv(command: str, engine: str, path: str) -> list[str]:
    argv = ["logs", command, "--json", "--engine", engine, path]
    if command == "check":
        argv += ["--gpu", "rtx5090"] if engine == "vllm" else ["--", *SGL_CMD]
    return argv


@pytest.mark.parametrize("command", ["parse", "check"])
@pytest.mark.parametrize("engine", ["sglang", "vllm"])
@pytest.mark.parametrize("kind", ["empty", "unrelated", "foreign"])
def test_a_log_without_the_engines_lines_is_refused_naming_them(cli_json, client, tmp_path, command, engine, kind):
    text = {"empty": "\n", "unrelated": "GET /index.html 200\nconnection closed\n", "foreign": LOGS[OTHER[engine]]}[kind]
    path = tmp_path / "boot.log"
    path.write_text(text)
    code, out = cli_json(*_argv(command, engine, str(path)))
    message = out["error"]["message"]
    assert code == 2 and "\n" not in message
    if kind == "foreign":
        assert f"check it with --engine {OTHER[engine]}" in message
    else:
        assert "none of the lines" in message and ("Load weight end" if engine == "sglang" else
                                                   "Available KV cache memory") in message
    body = {"log": text, "engine": engine} | ({"command": " ".join(SGL_CMD)} if command == "check" and engine ==
                                               "sglang" else {})
    res = client.post(f"/api/logs/{command}", json=body)
    assert res.status_code == 400 and res.json()["error"]["message"] == message.replace(str(path), "log")


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_a_log_cut_before_its_pool_lines_compares_nothing_and_says_what_it_lacks(cli, cli_json, client, tmp_path,
                                                                                engine):
    path = tmp_path / "cut.log"
    path.write_text(TRUNCATED[engine])
    code, parsed = cli_json(*_argv("parse", engine, str(path)))
    assert code == 1 and parsed["missing"]
    code, checked = cli_json(*_argv("check", engine, str(path)))
    assert code == 1 and checked["explained"] is False and checked["compared"] == 0
    assert checked["missing"] == parsed["missing"]
    needed = {"sglang": ["Mamba Cache is allocated", "KV Cache is allocated", "max_total_num_tokens="],
              "vllm": ["Available KV cache memory", "GPU KV cache size", "Maximum concurrency"]}[engine]
    assert [n for n in needed if any(n in line for line in checked["missing"])] == needed
    code, text, _ = cli(*[a for a in _argv("check", engine, str(path)) if a != "--json"])
    assert code == 1 and "nothing compared" in text and "every difference is explained" not in text
    body = {"log": TRUNCATED[engine], "engine": engine} | (
        {"command": " ".join(SGL_CMD)} if engine == "sglang" else {"gpu": "rtx5090"})
    res = client.post("/api/logs/check", json=body)
    assert res.status_code == 200 and res.json()["explained"] is False and res.json()["missing"] == checked["missing"]


def test_a_whole_log_still_passes_and_lacks_nothing(cli_json, tmp_path):
    for engine, text in LOGS.items():
        path = tmp_path / f"{engine}.log"
        path.write_text(text)
        code, parsed = cli_json(*_argv("parse", engine, str(path)))
        assert code == 0 and parsed["missing"] == []
        code, checked = cli_json(*_argv("check", engine, str(path)))
        assert code == 0 and checked["explained"] and checked["compared"] >= 3 and checked["missing"] == []


@pytest.mark.parametrize("name, root, chained", [
    # vllm-project/vllm#49064: vLLM's own refusal, carried out of the engine process by the API server's RuntimeError
    ("h100-qwen3.8-27b-mamba-blocks", ("ValueError", "max_num_seqs (1024) exceeds available Mamba cache blocks (969)"),
     ["RuntimeError: Engine core initialization failed. See root cause above"]),
    # a CUDA-graph capture out of memory: torch's capture error is raised while handling it
    ("capture-oom", ("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 1.02 GiB"),
     ["RuntimeError: CUDA error: operation failed due to a previous error", "RuntimeError: Engine core initial"]),
])
def test_a_failed_vllm_boot_is_named_by_its_root_error(cli_json, name, root, chained):
    path = str(V_FAILED / f"{name}.log")
    code, parsed = cli_json("logs", "parse", "--json", "--engine", "vllm", path)
    failure = parsed["failure"]
    assert code == 0 and parsed["missing"] == []  # the failure says where the log stops
    assert failure["type"] == root[0] and failure["message"].startswith(root[1])
    assert [c[:len(p)] for c, p in zip(failure["chained"], chained)] == chained
    code, checked = cli_json("logs", "check", "--json", "--engine", "vllm", path)
    assert code == 1 and checked["explained"] is False and checked["failure"] == failure
    if name == "capture-oom":  # its logged KV memory: a verdict without the card, which sees no runtime OOM there
        assert checked["verdict"]["serves"] and [(c["quantity"], c["match"]) for c in checked["checks"]] == [
            ("outcome", False)]
    else:  # no memory line, no card: no verdict, nothing compared
        assert checked["compared"] == 0 and checked["verdict"] is None
    # on the card the verdict is held to the outcome: the same refusal (its words; 969 blocks are not the bf16
    # checkpoint's 303 on an H100, vllm_launch_reports.yaml says why), or a capture OOM the Mamba-block check preempts
    code, checked = cli_json("logs", "check", "--json", "--engine", "vllm", "--gpu", "h100-80gb", path)
    rows = {c["quantity"]: (c["predicted"], c["logged"], c["match"]) for c in checked["checks"]}
    assert code == 1 and checked["explained"] is False and checked["verdict"]["phase"] == "cuda_graph"
    if name == "capture-oom":
        assert list(rows) == ["outcome"] and rows["outcome"][2] is False
    else:
        assert rows["outcome"][2] is True and rows["num_blocks"] == (303, 969, False)


def test_a_failed_sglang_boot_compares_nothing(cli_json):
    path = str(SYNTH / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-weights-oom.log")
    code, checked = cli_json("logs", "check", "--json", path, "--", *SGL_CMD)
    assert code == 1 and checked["explained"] is False and checked["failure"]["phase"] == "weights"
    assert checked["missing"] == [] and checked["compared"] == 0


def test_a_served_vllm_boot_holds_the_verdict_to_its_outcome(cli_json, tmp_path):
    """club-3090#652 logged its KV memory; with the API server's start line after it the boot served: the verdict on
    that memory serves too, and is compared. Without it (an excerpt) the outcome is not known and not compared."""
    path = tmp_path / "served.log"
    path.write_text(V_OK + "(APIServer pid=1) INFO 07-09 02:58:40 [api_server.py:1880] Starting vLLM server on "
                           "http://0.0.0.0:8000\n")
    code, checked = cli_json("logs", "check", "--json", "--engine", "vllm", str(path))
    rows = {c["quantity"]: c for c in checked["checks"]}
    assert code == 0 and checked["explained"] and checked["verdict"]["serves"]
    assert rows["outcome"] == {"quantity": "outcome", "predicted": "serves", "logged": "serves", "match": True}
    assert checked["verdict"]["confidence"]["level"] == "measured"
    path.write_text(V_OK)
    code, checked = cli_json("logs", "check", "--json", "--engine", "vllm", str(path))
    assert code == 0 and "outcome" not in {c["quantity"] for c in checked["checks"]} and checked["verdict"]["serves"]


def test_a_launch_that_cannot_be_sized_still_has_its_log_checked(cli_json, tmp_path):
    """The refusal of a launch from a local checkpoint path the catalog does not know: no verdict (it says why), the
    root error still named, nothing compared, so not explained; never an error that hides the log's own lines."""
    path = tmp_path / "local.log"
    path.write_text((V_FAILED / "h100-qwen3.8-27b-mamba-blocks.log").read_text().replace("Qwen/Qwen3.8-27B",
                                                                                          "/models/my-local-qwen"))
    code, checked = cli_json("logs", "check", "--json", "--engine", "vllm", "--gpu", "h100-80gb", str(path))
    assert code == 1 and checked["verdict"] is None and checked["compared"] == 0 and not checked["explained"]
    assert checked["no_verdict"].startswith("no verdict: /models/my-local-qwen")
    assert checked["failure"]["message"].startswith("max_num_seqs (1024) exceeds available Mamba cache blocks (969)")
