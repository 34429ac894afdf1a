"""`logs check` names the knob and a value that fits for the failures users see, from the log's own numbers, and
the engine model re-sizes every value it offers."""

from __future__ import annotations

import json

import pytest

from hybridplan.engine.sglang.command import parse_command
from hybridplan.engine.sglang.serving.constants import constants_for
from hybridplan.engine.sglang.serving.logcheck import check_log
from hybridplan.engine.sglang.logparse import parse_log
from tests.conftest import FIXTURES

LOGS = FIXTURES / "logs"
SYNTH = LOGS / "synthetic"
MARGIN = constants_for(None).margin_gib  # data/planner_constants.yaml


def _log(case: str):
    return SYNTH / f"sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-{case}.log"


def _command(path) -> str:
    return json.loads(path.with_name(path.name + ".json").read_text())["launch"]["command_verbatim"]


def _diagnosis(case: str, command: str | None = None) -> dict:
    path = _log(case)
    return check_log(parse_log(path.read_text()), parse_command(command or _command(path)))["diagnosis"]


def test_capture_oom_lowers_the_fraction_by_the_shortfall():
    """torch: 1.25 GiB asked, 212 MiB free: 0.9 - (1.25 - 212/1024 + margin) / 30.84 = 0.857.. -> 0.85."""
    d = _diagnosis("cuda-graph-oom", _command(_log("ok")))
    assert (d["phase"], d["knob"], d["value"]) == ("cuda_graph", "--mem-fraction-static", "0.85")
    assert d["numbers"]["need_gib"] == pytest.approx(1.25 - 212 / 1024 + MARGIN, abs=1e-3)
    need = 1.25 - 212 / 1024 + MARGIN
    assert "1.25 GiB with 0.21 GiB free" in d["why"] and f"0.9 - {need:.2f} / 30.84 = {0.9 - need / 30.84:.4f}" in d["why"]
    # re-sized at 0.85 from A = 14.36, P = 30.84: budget 14.36 - 30.84 x 0.15 - 100/1024
    assert d["fits"]["pool_budget_gib"] == pytest.approx(14.36 - 30.84 * 0.15 - 100 / 1024, abs=1e-4)
    assert (d["fits"]["max_mamba_cache_size"], d["fits"]["max_running_requests"]) == (30, 1)


def test_first_request_oom_without_room_in_the_chunk_lowers_the_fraction():
    """2.32 GiB for a 4096-token prefill with 75 MiB free: no chunk >= 256 tokens frees 2.50 GiB at 2.32/4096 GiB
    per token, so the fraction drops: 0.9 - (2.25 + margin) / 30.84 = 0.81.. -> 0.81."""
    d = _diagnosis("first-request-oom", _command(_log("ok")))
    assert (d["phase"], d["knob"], d["value"]) == ("first_request", "--mem-fraction-static", "0.81")
    assert d["numbers"]["need_gib"] == pytest.approx(2.32 - 75 / 1024 + MARGIN, abs=1e-3)
    assert d["why"].startswith("the first prefill ran out of memory")
    assert d["alternatives"] == []


def test_first_prefill_oom_shrinks_the_chunk():
    """1.16 GiB for an 8192-token prefill with 612 MiB free: need 0.56 GiB + margin; at the larger of 1.16/8192 GiB
    and the model's 194 KiB per token a chunk of at most ~3700 tokens fits: 2048, with the pools unchanged; the
    fraction is the alternative."""
    d = _diagnosis("first-prefill-oom-chunk")
    assert (d["knob"], d["value"]) == ("--chunked-prefill-size", "2048")
    assert d["numbers"]["prefill_tokens"] == 8192 and d["numbers"]["chunked_prefill_size"] == 8192
    assert d["fits"] == {"pool_budget_gib": 11.1783, "max_mamba_cache_size": 35, "max_total_num_tokens": 197163,
                         "max_running_requests": 1}
    alt = d["alternatives"][0]
    assert d["numbers"]["need_gib"] == pytest.approx(1.16 - 612 / 1024 + MARGIN, abs=1e-3)
    assert (alt["knob"], alt["value"]) == ("--mem-fraction-static", "0.87")  # 0.9 - 0.84 / 30.84 = 0.8727


def test_state_cache_too_small_raises_the_ratio():
    """K = 3 < S = 5 at ratio 0.06: 6 rows x 146.81 MiB in a budget of 11.18 GiB need r >= 0.083; the engine model
    boots at 0.09 (K = 5); a bfloat16 SSM state is the alternative (K = 7 in the same budget)."""
    d = _diagnosis("state-too-small")
    assert (d["phase"], d["knob"], d["value"]) == ("state_pool", "--mamba-full-memory-ratio", "0.09")
    assert (d["numbers"]["K"], d["numbers"]["S"], d["numbers"]["more_slots"]) == (3, 5, 2)
    assert "r >= 0.083" in d["why"]
    assert d["fits"]["max_mamba_cache_size"] == 5 and d["fits"]["max_running_requests"] == 1
    assert [(a["knob"], a["value"], a["fits"]["max_mamba_cache_size"]) for a in d["alternatives"]] == [
        ("--mamba-ssm-dtype", "bfloat16", 7)]


def test_too_small_refusal_rows_are_predicted_from_the_refusal():
    path = _log("state-too-small")
    result = check_log(parse_log(path.read_text()), parse_command(_command(path)))
    assert [(r["quantity"], r["observed"], r["predicted"], r["rule"]) for r in result["rows"]] == [
        ("max_mamba_cache_size", 3, 3, "match"), ("max_running_requests", 0, 0, "match")]
    assert result["explained"]


def test_cap_below_the_requests_asked():
    """--max-running-requests 16, capped to 7 (K = 35, S = 5): 81 rows; fp32 slots (146.77 MiB from the Mamba
    line) do not fit the 11.18 GiB budget at any ratio, bfloat16 ones do at r = 1.13 (K = 80 -> 16 requests)."""
    d = _diagnosis("capped")
    assert d["phase"] == "state_pool" and d["flags"] == ["--mamba-full-memory-ratio 1.13", "--mamba-ssm-dtype bfloat16"]
    assert (d["numbers"]["requests"], d["numbers"]["more_slots"]) == (16, 45)
    assert "(0.10 + 5.06) GiB over K + 1 = 36 rows" in d["why"]
    assert (d["fits"]["max_mamba_cache_size"], d["fits"]["max_running_requests"]) == (80, 16)


def test_real_mi355x_refusal_needs_p_for_a_value():
    """The MI355X log is the refusal alone: total_rest_memory = -7.96 GiB, 146.81 MB per slot; one request (S = 5)
    needs 6 rows / (0.9 / 1.9) = 1.82 GiB of budget, 9.78 GiB more, and without P no fraction can be named."""
    result = check_log(parse_log((LOGS / "qwen3.8-27b-fp8-mi355x-state-cache-failure.log").read_text()),
                       parse_command("--model-path Qwen/Qwen3.8-27B-FP8 --mem-fraction-static 0.25"),
                       log_version="0.5.17")
    d = result["diagnosis"]
    assert (d["knob"], d["value"], d["flags"]) == ("--mem-fraction-static", None, [])
    assert "9.78 GiB / P" in d["why"] and "no 'Load weight' line" in d["why"]
    assert d["numbers"]["pool_budget_gib"] == -7.96 and d["numbers"]["gib_per_slot"] == pytest.approx(146.81 / 1024)


def test_a_clean_boot_has_no_diagnosis():
    path = _log("ok")
    assert "diagnosis" not in check_log(parse_log(path.read_text()), parse_command(_command(path)))


def test_cli_prints_the_fix(cli):
    path = _log("first-prefill-oom-chunk")
    code, out, _ = cli("logs", "check", str(path), "--", *_command(path).split()[3:])
    assert code == 0 and "fix (first_request): --chunked-prefill-size 2048" in out
    assert "or (first_request): --mem-fraction-static 0.87" in out
