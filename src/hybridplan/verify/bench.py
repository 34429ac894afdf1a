"""The page's benchmark protocol as a command, and the numbers `sglang.bench_serving` prints.

bench_serving prints one result block (benchmark/serving.py, after `Serving Benchmark Result`): `{label:<40}
{value}` rows such as `Median TPOT (ms):`, `Output token throughput (tok/s):` and, with speculative decoding,
`Accept length:`. The keys below are those labels in snake case (`median_tpot_ms`, `output_throughput_tok_s`).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from hybridplan.errors import BadInput

# the SM120 protocol of the Qwen3.8-27B page (reference/cookbook-semantics.md section 5.1), for pages without one
DEFAULT_SPEED = (
    "python -m sglang.bench_serving --backend sglang-oai --host {{CURL_HOST}} --port {{CURL_PORT}} "
    "--dataset-name {{DATASET}} --random-input-len {{ISL}} --random-output-len {{OSL}} --random-range-ratio 1 "
    "--num-prompts {{NUM_PROMPTS}} --max-concurrency {{MAX_CONCURRENCY}} --request-rate inf --warmup-requests 1 "
    "--flush-cache"
)
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_BLOCK = re.compile(r"=+ Serving Benchmark Result =+")
_ROW = re.compile(r"^(?P<label>[A-Za-z][^:]*?):\s+(?P<value>\S+)\s*$")
_UNITS = (("(ms)", "ms"), ("(s)", "s"), ("(tok/s)", "tok_s"), ("(req/s)", "req_s"))


@dataclass(frozen=True, kw_only=True)
class Workload:
    """What the benchmark sends: input and output lengths, concurrency, prompts."""

    isl: int
    osl: int
    concurrency: int
    num_prompts: int
    dataset: str = "random"

    def as_dict(self) -> dict[str, Any]:
        return {"isl": self.isl, "osl": self.osl, "concurrency": self.concurrency, "num_prompts": self.num_prompts,
                "dataset": self.dataset}


def default_num_prompts(concurrency: int) -> int:
    """The docs' Reproduce rule when neither the record nor the page names a count: max(2 x concurrency, 200)."""
    return max(2 * concurrency, 200)


def bench_argv(template: str | None, w: Workload, *, host: str, port: int) -> list[str]:
    """The speed template with its placeholders filled, as the argv after `python` (`-m sglang.bench_serving ...`)."""
    values = {"CURL_HOST": host, "CURL_PORT": str(port), "HOST_IP": host, "PORT": str(port), "DATASET": w.dataset,
              "ISL": str(w.isl), "OSL": str(w.osl), "NUM_PROMPTS": str(w.num_prompts),
              "MAX_CONCURRENCY": str(w.concurrency)}
    text = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template or DEFAULT_SPEED)
    left = _PLACEHOLDER.findall(text)
    if left:
        raise BadInput(f"the page's benchmark command has placeholders verify cannot fill: {', '.join(left)}")
    argv = shlex.split(text)
    if argv and argv[0].rsplit("/", 1)[-1].startswith("python"):
        argv = argv[1:]
    if argv[:2] != ["-m", "sglang.bench_serving"] and argv[:2] != ["-m", "sglang.benchmark.serving"]:
        raise BadInput(f"the page's benchmark command is not `python -m sglang.bench_serving ...`: {text[:80]}")
    return argv


def _key(label: str) -> str:
    for unit, suffix in _UNITS:
        if label.endswith(unit):
            label = label[: -len(unit)] + " " + suffix
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


def parse_bench(text: str) -> dict[str, Any] | None:
    """The last result block's rows as {key: number or text}; None when bench_serving printed none."""
    blocks = _BLOCK.split(text)
    if len(blocks) < 2:
        return None
    out: dict[str, Any] = {}
    for line in blocks[-1].splitlines():
        m = _ROW.match(line.strip())
        if m is None:
            continue
        value = m.group("value")
        if re.fullmatch(r"-?\d+", value):
            out[_key(m.group("label"))] = int(value)
        elif re.fullmatch(r"-?\d+\.\d*", value):
            out[_key(m.group("label"))] = float(value)
        else:
            out[_key(m.group("label"))] = value  # `inf`, `not set`, the backend name
    return out or None


# the few numbers a measurement record keeps (cookbook Measurement fields and the card rows)
SUMMARY_KEYS = {
    "tpot_ms": "median_tpot_ms", "ttft_ms": "median_ttft_ms", "accept_length": "accept_length",
    "output_throughput_tok_s": "output_token_throughput_tok_s",
    "total_throughput_tok_s": "total_token_throughput_tok_s", "successful_requests": "successful_requests",
}


def summary(bench: dict[str, Any] | None) -> dict[str, Any]:
    """TPOT (median), TTFT (median), accept length, throughput and completed requests from a parsed block."""
    if not bench:
        return {}
    return {k: bench[v] for k, v in SUMMARY_KEYS.items() if v in bench}
