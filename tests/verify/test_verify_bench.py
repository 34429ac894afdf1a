"""The benchmark protocol as a command, and bench_serving's result block as numbers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hybridplan.errors import BadInput
from hybridplan.verify.bench import DEFAULT_SPEED, Workload, bench_argv, default_num_prompts, parse_bench, summary
from tests.verify.conftest import BENCH

W = Workload(isl=8192, osl=1024, concurrency=4, num_prompts=16)


def test_parse_the_result_block():
    got = parse_bench(BENCH.read_text())
    assert got["successful_requests"] == 4 and got["median_tpot_ms"] == 31.02 and got["accept_length"] == 3.21
    assert got["output_token_throughput_tok_s"] == 31.14 and got["traffic_request_rate"] == "inf"
    assert summary(got) == {"tpot_ms": 31.02, "ttft_ms": 1118.9, "accept_length": 3.21,
                            "output_throughput_tok_s": 31.14, "total_throughput_tok_s": 280.29,
                            "successful_requests": 4}


def test_no_result_block_is_none():
    assert parse_bench("Traceback (most recent call last):\nConnectionRefusedError") is None
    assert summary(None) == {}


# benchmark/serving.py prints `{:<40} {:<10.2f}` rows; any value survives the round trip
@given(tpot=st.floats(0, 1e6, allow_nan=False), accept=st.floats(0, 64, allow_nan=False), done=st.integers(0, 10**6))
def test_print_format_round_trip(tpot, accept, done):
    text = "\n".join([
        "\n{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=50, c="="),
        "{:<40} {:<10}".format("Successful requests:", done),
        "{:<40} {:<10.2f}".format("Accept length:", accept),
        "{:<40} {:<10.2f}".format("Median TPOT (ms):", tpot),
    ])
    got = parse_bench(text)
    assert got == {"successful_requests": done, "accept_length": round(accept, 2), "median_tpot_ms": round(tpot, 2)}


def test_the_pages_template_is_filled():
    template = ("python -m sglang.bench_serving --backend sglang-oai --host {{CURL_HOST}} --port {{CURL_PORT}} "
                "--dataset-name {{DATASET}} --random-input-len {{ISL}} --random-output-len {{OSL}} "
                "--num-prompts {{NUM_PROMPTS}} --max-concurrency {{MAX_CONCURRENCY}}")
    assert bench_argv(template, W, host="127.0.0.1", port=31000) == [
        "-m", "sglang.bench_serving", "--backend", "sglang-oai", "--host", "127.0.0.1", "--port", "31000",
        "--dataset-name", "random", "--random-input-len", "8192", "--random-output-len", "1024", "--num-prompts", "16",
        "--max-concurrency", "4"]


def test_a_page_without_a_template_gets_the_sm120_protocol():
    argv = bench_argv(None, W, host="h", port=1)
    assert argv[:2] == ["-m", "sglang.bench_serving"] and "--flush-cache" in argv and "--warmup-requests" in argv
    assert "{{" in DEFAULT_SPEED and "{{" not in " ".join(argv)


def test_unfillable_or_foreign_templates_are_refused():
    with pytest.raises(BadInput, match="HF_TOKEN"):
        bench_argv("python -m sglang.bench_serving --token {{HF_TOKEN}}", W, host="h", port=1)
    with pytest.raises(BadInput, match="not `python -m sglang.bench_serving"):
        bench_argv("curl http://{{CURL_HOST}}", W, host="h", port=1)


def test_default_prompt_count_follows_the_docs():
    assert (default_num_prompts(1), default_num_prompts(64), default_num_prompts(256)) == (200, 200, 512)
