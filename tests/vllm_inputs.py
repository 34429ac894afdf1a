"""Hostile vLLM inputs the hardening and web fuzz tests share (hypothesis strategies): launches built from the
release's own flags with number-like and JSON values, and public boot-log lines with a span replaced by
number-like text."""

from __future__ import annotations

import shlex

from hypothesis import strategies as st

from tests.conftest import FIXTURES

LOG_652 = (FIXTURES / "vllm" / "club3090-652-rtx5090.log").read_text()
SUMMARY_1087 = (FIXTURES / "vllm" / "club3090-1087-2x5090-memory.log").read_text()
V = ["vllm", "serve", "Qwen/Qwen3.6-35B-A3B"]


def _flags() -> list[str]:
    from hybridplan.engine.api import for_engine

    reg = for_engine("vllm").registry()
    return sorted(o for o in reg.by_option if o.startswith("-") and o not in ("--model", "-h", "--help"))


numbers = st.one_of(st.integers(-(1 << 70), 1 << 70).map(str), st.floats().map(repr),
                    st.sampled_from(["0", "-1", "1K", "1.5K", "25.6k", "auto", "nan", "inf", "1e300", "NaN", "1,0"]))
values = st.one_of(numbers, st.text(max_size=12), st.sampled_from(
    ['{"method":"mtp","num_speculative_tokens":2}', '{"x":NaN}', "[1,2]", "{}", "FULL", "fp8", "true"]))


_SPELLINGS = ["-O", "-O3", "-cc.cudagraph_mode", "-sc.num_speculative_tokens", "--compilation-config.mode"]


@st.composite
def vllm_launches(draw) -> str:
    """`vllm serve MODEL` and up to six of the release's flags (or its dotted and -O spellings), each with zero to
    two values or one `=value`."""
    flags = _flags() + _SPELLINGS
    words = [*V]
    for _ in range(draw(st.integers(0, 6))):
        flag, given = draw(st.sampled_from(flags)), draw(st.lists(values, max_size=2))
        words += [f"{flag}={given[0]}"] if given and draw(st.booleans()) else [flag, *given]
    return shlex.join(words)


LINES = LOG_652.splitlines() + SUMMARY_1087.splitlines()


@st.composite
def mutated_logs(draw) -> str:
    """Up to eight boot-log lines, each with a span replaced by number-like text."""
    picks = draw(st.lists(st.tuples(st.sampled_from(LINES), st.integers(0, 400), st.text(
        alphabet="0123456789.,-eE xGiB%{}'", max_size=12)), min_size=1, max_size=8))
    return "\n".join(line[:at] + junk + line[at + len(junk):] for line, at, junk in picks)
