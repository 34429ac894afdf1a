"""Every vLLM log and command parser is linear in its input: each pattern has bounded repeats only (its shape), the
characters handed to the patterns grow no faster than the input, and the args-line finder reads each character a
bounded number of times. Nothing here is timed."""

from __future__ import annotations

from re import _parser as sre_parse

import pytest

from hybridplan.engine import numbers
from hybridplan.engine.vllm import command, failures, flexible
from hybridplan.engine.vllm.serving import logcheck, memory_log
from hybridplan.errors import BadInput
from tests.linear_patterns import patterns, unbounded, work

MODULES = (command, failures, flexible, logcheck, memory_log, numbers)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_vllm_parser_pattern_has_bounded_repeats_only(module):
    found = patterns(module)
    assert found
    for name, p in found.items():
        parsed = sre_parse.parse(p.pattern, p.flags)
        assert not unbounded(parsed), f"{module.__name__}.{name}: {p.pattern}"
        assert parsed.getwidth()[1] <= 4096, name


def _read_log(text: str) -> None:
    for parse in (logcheck.parse_vllm_log, memory_log.parse_memory, failures.failure):
        try:
            parse(text)
        except BadInput:
            pass


_SUMMARY_START = ("Free memory on device (30.27/31.4 GiB) on startup. Desired GPU memory utilization is (0.92, 28.88 "
                  "GiB). Actual usage is 15.03 GiB for consumed memory (weights + non-torch), 1.59 GiB for peak "
                  "activation, and 0.09 GiB for CUDAGraph memory. ")
LOGS = {
    "args markers, unclosed": lambda n: "non-default args: {" * (n // 19),
    "summary starts without the KV figure": lambda n: _SUMMARY_START * (n // len(_SUMMARY_START)),
    "one long number": lambda n: "Available KV cache memory: " + "9" * n,
    "digits and dots": lambda n: "1." * (n // 2),
    "capacity markers": lambda n: "Maximum concurrency for 1 tokens per request: " * (n // 46),
    "number-like words": lambda n: "GPU KV cache size: 1,2,3 " * (n // 25),
    "open release tags": lambda n: "LLM engine (v0" * (n // 14),
    "exception-like lines": lambda n: "(EngineCore_DP0 pid=1) ERROR 01-01 00:00:00 [core.py:1] ValueError: x\n" * (n // 69),
    "dotted names without an error": lambda n: "a." * (n // 2),
}


@pytest.mark.parametrize("kind", LOGS)
def test_reading_adversarial_vllm_logs_is_linear(monkeypatch, kind):
    """A 1 MB and a 2 MB line of the same kind: the characters the patterns are handed grow x2, not x4 (a search
    restarted per marker, as the `non-default args: {.*}` pattern was, makes them quadratic)."""
    small, large = LOGS[kind](1_000_000), LOGS[kind](2_000_000)
    w_small = work(monkeypatch, MODULES, lambda: _read_log(small))
    w_large = work(monkeypatch, MODULES, lambda: _read_log(large))
    assert w_large <= 2.1 * w_small
    assert w_small <= 40 * len(small)


def _launch(n: int, kind: str) -> str:
    words = {"dotted keys": "-cc.a{i}=1 ", "JSON escapes": None, "suffixed numbers": "--max-model-len {i}k ",
             "underscored flags": "--max_num_seqs=8 "}[kind]
    if words is None:
        return "vllm serve m --compilation-config '{\"a\": \"" + "\\\\\\\"" * (n // 4) + "\"}'"
    return "vllm serve m " + "".join(words.format(i=i) for i in range(n // (len(words) + 2)))


@pytest.mark.parametrize("kind", ["dotted keys", "JSON escapes", "suffixed numbers", "underscored flags"])
def test_reading_adversarial_launches_is_linear(monkeypatch, kind):
    """Launches of 100k and 200k characters (under the word bound): the same x2."""

    def parse(text: str) -> None:
        try:
            command.parse_command(text)
        except BadInput:
            pass

    small, large = _launch(100_000, kind), _launch(200_000, kind)
    w_small, w_large = work(monkeypatch, MODULES, lambda: parse(small)), work(monkeypatch, MODULES, lambda: parse(large))
    assert w_large <= 2.1 * w_small + 1000


class _CountingText(str):
    """Text whose find/rfind add the characters each call scans (up to the hit, or the whole span) to a tally."""

    tally = 0

    def find(self, sub, start=0, end=None, /):  # type: ignore[override]
        end = len(self) if end is None else end
        hit = str.find(self, sub, start, end)
        _CountingText.tally += (end if hit < 0 else hit + len(sub)) - start
        return hit

    def rfind(self, sub, start=0, end=None, /):  # type: ignore[override]
        end = len(self) if end is None else end
        hit = str.rfind(self, sub, start, end)
        _CountingText.tally += end - (start if hit < 0 else hit)
        return hit


@pytest.mark.parametrize("line", ["non-default args: {", "non-default args: x", "x"])
def test_the_args_line_finder_reads_each_character_a_bounded_number_of_times(line):
    for lines in (20_000, 40_000):
        _CountingText.tally = 0
        text = _CountingText(("\n".join([line * 50] * lines)) + "\nnon-default args: {'model_tag': 'm'}")
        assert command.args_line(text) == "{'model_tag': 'm'}"
        assert _CountingText.tally <= 4 * len(text), (line, lines, _CountingText.tally, len(text))


def test_the_issue_reproduction_answers_from_the_real_args_line():
    """issue 27: 40,000 unclosed markers before a real boot log (quadratic before): the real line is the launch."""
    from tests.conftest import FIXTURES

    text = "non-default args: {" * 40000 + "\n" + (FIXTURES / "vllm" / "club3090-652-rtx5090.log").read_text()
    log = logcheck.parse_vllm_log(text)
    assert log.non_default_args is not None and "'max_model_len': 131072" in log.non_default_args
    assert log.available_kv_gib == 6.01 and log.kv_cache_tokens == 569_878
