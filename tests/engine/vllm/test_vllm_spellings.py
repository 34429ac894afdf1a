"""Each release's `vllm serve` spellings as its own parser takes them (FlexibleArgumentParser and argparse): hidden
`--no-` forms, underscores, `-O` levels, dotted keys of JSON-valued flags, human-readable integers, `auto`. The same
argv against vLLM's real parser: tests/conformance/test_vllm_parser_conformance.py."""

from __future__ import annotations


import pytest

from hybridplan.engine.vllm.command import parse_command
from hybridplan.errors import BadInput

M = "vllm serve Qwen/Qwen3.5-27B "


def _values(flags: str, version: str = "0.33.0") -> dict:
    values = dict(parse_command(M + flags, version).values)
    del values["model"]
    return values


@pytest.mark.parametrize("flags,version,expected", [
    ("--no-enable-prefix-caching", "0.33.0", {"enable_prefix_caching": False}),  # hidden, still taken
    ("--disable-prefix-caching", "0.33.0", {"enable_prefix_caching": False}),
    ("--enable-prefix-caching", "0.33.0", {"enable_prefix_caching": True}),
    ("--no-enable-prefix-caching", "0.24.0", {"enable_prefix_caching": False}),  # BooleanOptionalAction
    ("--no-enforce-eager", "0.33.0", {"enforce_eager": False}),
    ("--max_model_len 4096 --max_num_seqs=8", "0.33.0", {"max_model_len": 4096, "max_num_seqs": 8}),
    ("--max-model-len=auto", "0.33.0", {"max_model_len": -1}),
    ("--max-model-len AUTO", "0.20.0", {"max_model_len": -1}),
    ("--max-model-len -1", "0.33.0", {"max_model_len": -1}),
    ("--max-model-len 1K --max-num-batched-tokens 8k", "0.33.0", {"max_model_len": 1024,
                                                                  "max_num_batched_tokens": 8000}),
    ("--max-model-len 25.6k", "0.24.0", {"max_model_len": 25600}),
    ("-O3", "0.33.0", {"optimization_level": "3"}),
    ("-O=2", "0.33.0", {"optimization_level": "2"}),
    ("-O 1", "0.33.0", {"optimization_level": "1"}),
    ("-O.cudagraph_mode=FULL", "0.33.0", {"optimization_level": ".cudagraph_mode=FULL"}),  # -O is the level
    ("-cc.cudagraph_mode=FULL", "0.33.0", {"compilation_config": {"cudagraph_mode": "FULL"}}),
    ("-cc.cudagraph_mode=FULL -cc.mode 3", "0.33.0", {"compilation_config": {"cudagraph_mode": "FULL", "mode": 3}}),
    # keys merge per spelling; each spelling's object is handed to the flag in turn, so the last one wins
    ("--compilation_config.cudagraph_mode FULL -cc.mode 3", "0.33.0", {"compilation_config": {"mode": 3}}),
    ("-cc.pass_config.fuse_norm_quant=true -cc.pass_config.eliminate_noops=false", "0.33.0",
     {"compilation_config": {"pass_config": {"fuse_norm_quant": True, "eliminate_noops": False}}}),
    ("-cc.cudagraph_capture_sizes+ 1,2 -cc.cudagraph_capture_sizes+=4", "0.33.0",
     {"compilation_config": {"cudagraph_capture_sizes": ["1", "2", "4"]}}),
    ("--compilation-config '{\"max_cudagraph_capture_size\": 2K}'", "0.33.0",
     {"compilation_config": {"max_cudagraph_capture_size": 2048}}),
    ("-sc.method mtp -sc.num_speculative_tokens=2", "0.24.0",
     {"speculative_config": {"method": "mtp", "num_speculative_tokens": 2}}),
    ("--speculative-config '{\"method\": \"mtp\"}' -sc.num_speculative_tokens 3", "0.33.0",
     {"speculative_config": {"num_speculative_tokens": 3}}),  # the dotted keys come last: they win
    ("-tp=2 -tp 4", "0.33.0", {"tensor_parallel_size": 4}),
    ("--enable-prefix --max-model 4096", "0.33.0", {"enable_prefix_caching": True, "max_model_len": 4096}),
])
def test_spellings_the_release_takes(flags, version, expected):
    assert _values(flags, version) == expected


@pytest.mark.parametrize("flags,version,message", [
    ("--no-disable-prefix-caching", "0.33.0", "unrecognized arguments: --no-disable-prefix-caching"),
    ("--disable-prefix-caching", "0.24.0", "unrecognized arguments: --disable-prefix-caching"),
    ("--max-model-len 1.5K", "0.33.0", "argument --max-model-len: Decimals are not allowed with binary suffixes "
                                       "like K. Did you mean to use 1.5k instead?"),
    ("--max-model-len 1e3", "0.33.0", "argument --max-model-len: invalid human_readable_int_or_auto value: '1e3'"),
    ("--speculative-config '{\"method\": \"mtp\", \"x\": NaN}'", "0.33.0",
     "argument --speculative-config/-sc: `x`: NaN is not a finite number"),
    ("-sc.num_speculative_tokens 1e999", "0.33.0", "`num_speculative_tokens`: Infinity is not a finite number"),
    ("-cc" + ".a" * 70 + "=1", "0.33.0", "a dotted key nests deeper than 64 levels"),
    ("-cc.mode", "0.33.0", "argument -cc.mode: expected one argument"),
])
def test_spellings_the_release_or_hybridplan_refuses(flags, version, message):
    with pytest.raises(BadInput) as exc:
        parse_command(M + flags, version)
    assert exc.value.message.startswith("vllm serve: error: ") and message in exc.value.message
    assert "\n" not in exc.value.message
