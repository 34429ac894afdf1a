"""Boot logs as people paste them: excerpts that start mid-boot, lines without prefixes, older releases' line
formats, and the bounds that keep parsing linear in the input whatever it holds."""

from __future__ import annotations

import re
from re import _parser as sre_parse

import pytest

from hybridplan.engine.sglang.command import parse_command
from hybridplan.errors import BadInput
from hybridplan.engine.sglang import failures
from hybridplan.engine.sglang import log_fields as fields
from hybridplan.engine.sglang import logparse
from hybridplan.engine.sglang import log_records as records
from hybridplan.engine.sglang.serving.logcheck import check_log
from hybridplan.engine.logtext import MAX_LINE_CHARS
from hybridplan.engine.sglang.logparse import parse_log
from hybridplan.limits import MAX_LOG_BYTES, WEB_MAX_LOG_CHARS
from tests.conftest import FIXTURES
from tests.linear_patterns import Counting, patterns, unbounded, work

SYNTH = FIXTURES / "logs" / "synthetic"
OK = SYNTH / "sglang-0.5.23-qwen3.8-27b-nvfp4-rtx5090-ok.log"
OK_CMD = ("--model-path RadixArk/Qwen3.8-27B-NVFP4 --trust-remote-code --kv-cache-dtype fp8_e4m3 --mem-fraction-static "
          "0.9 --attention-backend flashinfer --max-running-requests 1 --cuda-graph-max-bs-decode 1 "
          "--mamba-radix-cache-strategy extra_buffer --mamba-ssm-dtype float32")


def _from(marker: str, *, strip_prefixes: bool = False) -> str:
    """The synthetic 0.5.23 boot from the first line holding `marker` on (a pasted excerpt)."""
    lines = OK.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if marker in line)
    kept = lines[start:]
    if strip_prefixes:
        kept = [re.sub(r"^\[[^\]]{1,40}\] ", "", line) for line in kept]
    return "\n".join(kept)


# ---------------------------------------------------------------------------------------------- excerpts


def test_excerpt_from_load_weight_end_gives_p_as_a_plus_usage():
    """Only `Load weight end … avail mem=14.36 GB, mem usage=16.48 GB`: P = 14.36 + 16.48 = 30.84, and every row
    matches the engine model as for the whole log."""
    boot = parse_log(_from("Load weight end"))
    assert "pre_load_avail_gib" not in boot.as_dict()
    assert boot.pre_load_over_ranks() == (30.84, "end")
    result = check_log(boot, parse_command(OK_CMD))
    assert result["proxies"]["pre_load_gib"]["value"] == 30.84
    assert "no 'Load weight begin' line" in result["proxies"]["pre_load_gib"]["note"]
    assert result["proxies"]["pool_budget_gib"]["value"] == pytest.approx(14.36 - 30.84 * 0.1 - 100 / 1024, abs=1e-4)
    assert [r["rule"] for r in result["rows"]] == ["match"] * 8 and result["explained"]


def test_excerpt_without_prefixes_parses_like_the_prefixed_one():
    assert parse_log(_from("Load weight end", strip_prefixes=True)).as_dict() == \
        parse_log(_from("Load weight end")).as_dict()


def test_excerpt_from_the_pools_says_which_line_is_missing():
    result = check_log(parse_log(_from("Mamba Cache")), parse_command(OK_CMD))
    unexplained = [r for r in result["rows"] if r["rule"] == "unexplained"]
    assert unexplained and all("no 'Load weight end' line" in r["explanation"] for r in unexplained)


def test_k_from_the_cap_line_alone():
    line = ("[2026-08-22 10:00:41] max_running_requests is capped to 7 by the mamba state cache (max_mamba_cache_size=35, "
            "5 state slots per request). To raise it: increase --mamba-full-memory-ratio or --max-mamba-cache-size, or "
            "halve the state size with --mamba-ssm-dtype bfloat16.")
    boot = parse_log(line)
    assert boot.as_dict() == {"max_mamba_cache_size": 35, "max_running_requests": 7}
    assert boot.rank0.capped_slots_per_request == 5


# ---------------------------------------------------------------------------------------------- older formats


def test_0_3_line_formats():
    """0.3.x: `Load weight end. type=…, dtype=…, avail mem=…` (no usage: begin - end), the summary without
    chunked_prefill_size (scheduler.py of sglang 0.3.6)."""
    text = "\n".join([
        "[TP0] Load weight begin. avail mem=78.50 GB",
        "[TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=63.20 GB",
        "[TP0] Memory pool end. avail mem=8.10 GB",
        "[TP0] max_total_num_tokens=812345, max_prefill_tokens=16384, max_running_requests=4097, context_len=32768",
    ])
    assert parse_log(text).as_dict() == {
        "pre_load_avail_gib": 78.5, "weights_gib": 15.3, "avail_after_load_gib": 63.2, "max_total_num_tokens": 812345,
        "max_running_requests": 4097, "context_len": 32768, "avail_after_pools_gib": 8.1}


def test_0_4_capture_line_has_avail_before_usage():
    """0.4.6 (model_runner.py, eagle_worker.py): `… avail mem=X GB. mem usage=Y GB.`, target and draft."""
    text = "\n".join([
        "[2025-05-01 10:00:00 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=8.05 GB",
        "[2025-05-01 10:00:12 TP0] Capture cuda graph end. Time elapsed: 12.31 s. avail mem=7.44 GB. mem usage=0.61 GB.",
        "[2025-05-01 10:00:15 TP0] Capture draft cuda graph end. Time elapsed: 3.02 s. avail mem=7.20 GB. "
        "mem usage=0.24 GB.",
        "[2025-05-01 10:00:16 TP0] max_total_num_tokens=812345, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        "max_running_requests=48, context_len=262144",
    ])
    got = parse_log(text)
    assert got.as_dict()["cuda_graph_gib"] == 0.85
    assert got.rank0.summary == {"max_total_num_tokens": 812345, "chunked_prefill_size": 8192,
                                 "max_prefill_tokens": 16384, "max_running_requests": 48, "context_len": 262144}


def test_dict_form_server_args_gives_the_fraction():
    boot = parse_log("server_args={'model_path': 'Qwen/Qwen3.5-9B', 'mem_fraction_static': 0.83, "
                     "'max_running_requests': 12}")
    assert boot.rank0.logged_mem_fraction_static == 0.83 and boot.rank0.logged_max_running_requests == 12


def test_a_scheduler_self_report_is_not_the_summary():
    """0.3.x warnings print `self.max_total_num_tokens=…` (f-string `=`): not the scheduler's summary line."""
    boot = parse_log("Warning: available_size=10, self.max_total_num_tokens=812345, max_running_requests=3\n")
    assert boot.as_dict() == {}


# ---------------------------------------------------------------------------------------------- bounds


def test_bounds_are_checked_before_parsing():
    with pytest.raises(BadInput, match=r"^pasted: 3,000,001 characters, over the 3,000,000-character bound"):
        parse_log("x" * 3_000_001, name="pasted", max_chars=3_000_000)
    with pytest.raises(BadInput, match=rf"^log: line 2 is {MAX_LINE_CHARS + 1:,} characters long, over the "):
        parse_log("ok\n" + "y" * (MAX_LINE_CHARS + 1))
    assert MAX_LOG_BYTES == 8 << 20 and WEB_MAX_LOG_CHARS <= MAX_LOG_BYTES


def test_cli_refuses_an_oversized_file_before_reading_it(cli, cli_json, tmp_path):
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        f.truncate(MAX_LOG_BYTES + 1)  # sparse: stat says it is too big, nothing is read
    code, out = cli_json("logs", "parse", str(big), "--json")
    assert code == 2 and out["error"]["message"].startswith(f"{big}: 8,388,609 bytes, over the 8,388,608-byte bound")
    code, _, err = cli("logs", "check", str(big), "--", *OK_CMD.split())
    assert code == 2 and "over the 8,388,608-byte bound" in err and "Traceback" not in err


# ---------------------------------------------------------------------------------------------- linear time

MODULES = (records, fields, logparse, failures)


def test_the_shape_check_catches_backtracking_patterns():
    for pattern in (r"Load weight end\..*?avail mem=(\d+)", r"(\w+)=", r"a(?:b|c+)d", r"x{2,}"):
        assert unbounded(sre_parse.parse(pattern)), pattern
    assert not unbounded(sre_parse.parse(r"(?<![\w#.])[A-Za-z_]\w{0,63} ?[=:]"))


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_parser_pattern_has_bounded_repeats_only(module):
    """With bounded repeats, one match attempt costs at most the pattern's maximum width (finite), so a search over
    n characters costs O(n x width): no `.*?` or `\\w+` that backtracks over the whole line."""
    found = patterns(module)
    assert found
    for name, p in found.items():
        assert not unbounded(sre_parse.parse(p.pattern, p.flags)), f"{module.__name__}.{name}: {p.pattern}"
        assert sre_parse.parse(p.pattern, p.flags).getwidth()[1] <= 4096, name


def _work(monkeypatch, text: str) -> int:
    return work(monkeypatch, MODULES, lambda: parse_log(text), extra=lambda m, tally: m.setattr(
        failures, "_ENGINE_MESSAGES", tuple((phase, Counting(n, tally) if isinstance(n, re.Pattern) else n)
                                            for phase, n in failures._ENGINE_MESSAGES)))


ADVERSARIAL = {
    "unclosed load line": lambda n: "Load weight end." + "avail mem=1" * (n // 11),
    "one long word": lambda n: "a" * n,
    "digits and dots": lambda n: "1." * (n // 2),
    "capture markers": lambda n: "Capture " * (n // 8),
    "separators": lambda n: "=" * n,
    "keys without values": lambda n: "a=" * (n // 2),
    "open prefixes": lambda n: ("[2026-08-22 10:00:00" + " TP0" * 8) * (n // 52),
    "exception-like": lambda n: "x" * (n - 5) + "Error",
    "ansi escapes": lambda n: "\x1b[" + "1" * (n - 2),
    "prefixed run-together": lambda n: "[2026-08-22 10:00:00 TP0] Mamba Cache is allocated. " * (n // 52),
}


@pytest.mark.parametrize("kind", ADVERSARIAL)
def test_parsing_adversarial_lines_is_linear(monkeypatch, kind):
    """A 1 MB and a 2 MB line of the same kind: the characters handed to the patterns grow no faster than the
    input (x2), and stay within a small multiple of it. A search restarted from the line's start per field (or per
    position) makes the work quadratic and this fails (x4); a backtracking pattern fails the shape test above."""
    small, large = ADVERSARIAL[kind](1_000_000), ADVERSARIAL[kind](2_000_000)
    w_small, w_large = _work(monkeypatch, small), _work(monkeypatch, large)
    assert w_large <= 2.1 * w_small
    assert w_small <= 40 * len(small)


def test_cli_refuses_a_fifo_or_device_as_a_log_without_reading_it(cli_json, tmp_path):
    import os

    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)  # opening it for reading would block until a writer came
    for path in (fifo, "/dev/zero", tmp_path):
        code, out = cli_json("logs", "parse", str(path), "--json")
        assert code == 2 and out["error"]["message"] == f"{path}: not a regular file"
