"""What `cookbook export --format sglang-jsx` adds to a docs module reads like the module: plain data laid out as
prettier lays out the docs tree (the expected texts below are prettier 3.10.1's output on them, unchanged), and
Node reads the same data back."""

from __future__ import annotations

import pytest

from hybridplan.cookbook.docs import pretty
from hybridplan.cookbook.docs.node_eval import evaluate_source

DATA = {
    "hybridplan": {"id": "kimi-k3", "engine_version": "0.5.23",
                   "description": "Hybrid MoE VLM: 93 layers (69 Kimi Delta Attention + 24 MLA), 896 routed experts",
                   "workload": {"request_length": 11264, "concurrency": 64},
                   "known_refused": [{"when": {"equals": {"quant": "nvfp4"}}, "reason": "no config bundled",
                                      "source": "catalog"}],
                   "examples": [{"id": "x", "command": "curl -d '{\"model\": \"m\"}'"}]},
    "numPromptsByConc": {"1": 4, "16": 80, "pd-mode": 1},
    "sweep": [0.85, 0.9, 1e-05, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1300, 1400],
}

PRETTIER = """export const config = {
  hybridplan: {
    id: "kimi-k3",
    engine_version: "0.5.23",
    description:
      "Hybrid MoE VLM: 93 layers (69 Kimi Delta Attention + 24 MLA), 896 routed experts",
    workload: { request_length: 11264, concurrency: 64 },
    known_refused: [
      {
        when: { equals: { quant: "nvfp4" } },
        reason: "no config bundled",
        source: "catalog",
      },
    ],
    examples: [{ id: "x", command: 'curl -d \\'{"model": "m"}\\'' }],
  },
  numPromptsByConc: { 1: 4, 16: 80, "pd-mode": 1 },
  sweep: [
    0.85, 0.9, 1e-5, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100,
    1200, 1300, 1400,
  ],
};
"""


def _module(data: dict) -> str:
    return "export const config = {\n" + "".join(f"  {pretty.prop(k, v, 2)},\n" for k, v in data.items()) + "};\n"


def test_data_is_laid_out_as_prettier_lays_it_out():
    assert _module(DATA) == PRETTIER


def test_node_reads_the_same_data_back():
    assert evaluate_source(_module(DATA), "pretty.jsx").data == DATA


@pytest.mark.parametrize("value, text", [
    ("plain", '"plain"'),
    ('say "hi"', "'say \"hi\"'"),  # more double quotes than single: single-quoted
    ("a 'b' \"c\"", '"a \'b\' \\"c\\""'),  # a tie keeps double quotes
    ("it's \"x\"", "'it\\'s \"x\"'"),
    ("tab\there", '"tab\\there"'),
])
def test_strings_take_the_quotes_prettier_picks(value, text):
    assert pretty.string(value) == text


def test_two_or_more_objects_of_two_or_more_keys_always_break():
    assert pretty.value([{"a": 1, "b": 2}, {"a": 1, "b": 2}], 2, 0) == "[\n  { a: 1, b: 2 },\n  { a: 1, b: 2 },\n]"
    assert pretty.value([{"a": 1}, {"a": 1}], 2, 0) == "[{ a: 1 }, { a: 1 }]"


def test_a_long_string_moves_below_a_long_key_but_not_a_short_one():
    long = "x" * 80
    assert pretty.prop("reason", long, 2) == f'reason:\n    "{long}"'
    assert pretty.prop("id", long, 2) == f'id: "{long}"'
