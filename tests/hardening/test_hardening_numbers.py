"""Numbers validated at the edge: CLI options, flag values in a pasted command, config.json and page YAML.
NaN, infinities, 1e300 and negatives where a size, fraction or count is meant are one-line errors naming the field."""

from __future__ import annotations

import json

import pytest
from hardening_support import bundled_config

LAUNCH = ["--", "--model-path", "Qwen/Qwen3.8-27B"]
BAD = ["nan", "inf", "-inf", "1e300"]


@pytest.mark.parametrize("value", BAD)
@pytest.mark.parametrize("option", ["--pool-budget-gib", "--gpu-memory-gib", "--weights-gib", "--available-gib",
                                    "--pre-load-gib"])
def test_explain_gib_options(refused, option, value):
    refused(["explain", option, value, *LAUNCH], option)


@pytest.mark.parametrize("option,value", [("--gpu-memory-gib", "-80"), ("--gpu-memory-gib", "0"),
                                          ("--weights-gib", "-1"), ("--available-gib", "-0.5")])
def test_negative_memory_is_refused(refused, option, value):
    refused(["explain", option, value, *LAUNCH], option)


def test_a_negative_pool_budget_is_the_engines_refusal(cli_json):
    code, out = cli_json("explain", "--json", "--pool-budget-gib", "-7.96", *LAUNCH)
    assert code == 3 and out["error"]["message"].startswith("Not enough GPU memory")


@pytest.mark.parametrize("option,value", [("-L", "0"), ("-L", "-5"), ("-L", "1e300"), ("-L", "nan"),
                                          ("-L", str(1 << 30)), ("-C", "0"), ("-C", "-1"), ("-C", "inf"),
                                          ("-C", str(1 << 40))])
def test_ratio_workload(refused, option, value):
    argv = ["ratio", "-L", "4096", "-C", "8", *LAUNCH]
    argv[argv.index(option) + 1] = value
    err = refused(argv, "--request-length" if option == "-L" else "--concurrency")
    assert "Invalid value" in err


@pytest.mark.parametrize("extra,field", [(["--tp", "0"], "--tp"), (["--tp", "4096"], "--tp"),
                                         (["--max-mem-fraction", "nan"], "--max-mem-fraction"),
                                         (["--max-mem-fraction", "1.5"], "--max-mem-fraction"),
                                         (["--max-mem-fraction", "0"], "--max-mem-fraction"),
                                         (["--gpu-memory-gib", "inf"], "--gpu-memory-gib"),
                                         (["-C", "-3"], "--concurrency")])
def test_plan_options(refused, extra, field):
    argv = ["plan", "--model", "Qwen/Qwen3.8-27B", "--gpu", "h200", "-L", "4096", "-C", "8", *extra]
    refused(argv, field)


@pytest.mark.parametrize("flag,value", [
    ("--mem-fraction-static", "nan"), ("--mem-fraction-static", "inf"), ("--mem-fraction-static", "-0.2"),
    ("--mem-fraction-static", "1.5"), ("--mem-fraction-static", "0"),
    ("--mamba-full-memory-ratio", "-1"), ("--mamba-full-memory-ratio", "1e300"), ("--mamba-full-memory-ratio", "nan"),
    ("--max-running-requests", "-4"), ("--max-running-requests", "0"), ("--page-size", "-1"),
    ("--context-length", "-100"), ("--speculative-num-steps", "-1"), ("--watchdog-timeout", "inf"),
])
def test_flag_values_in_a_pasted_command(refused, flag, value):
    err = refused(["explain", *LAUNCH, flag, value], flag)
    assert err.startswith("error: sglang serve: error: argument")


def _config_dir(tmp_path, **text_fields) -> str:
    cfg = bundled_config()
    cfg["text_config"].update(text_fields)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    return str(tmp_path)


@pytest.mark.parametrize("fields,field", [
    ({"num_key_value_heads": 0}, "text_config.num_key_value_heads"),
    ({"num_attention_heads": -8}, "text_config.num_attention_heads"),
    ({"head_dim": -256}, "text_config.head_dim"),
    ({"head_dim": 2.5}, "text_config.head_dim"),
    ({"head_dim": "256"}, "text_config.head_dim"),
    ({"linear_key_head_dim": True}, "text_config.linear_key_head_dim"),
    ({"num_hidden_layers": 0}, "text_config.num_hidden_layers"),
    ({"full_attention_interval": -4}, "text_config.full_attention_interval"),
    ({"rope_parameters": {"factor": float("nan")}}, "text_config.rope_parameters.factor"),
    ({"rope_parameters": {"factor": -2}}, "text_config.rope_parameters.factor"),
    ({"max_position_embeddings": 1e300}, "text_config.max_position_embeddings"),
    ({"rope_scaling": [1, 2]}, "text_config.rope_scaling"),
])
def test_config_json_numbers(refused, tmp_path, fields, field):
    refused(["explain", "--", "--model-path", _config_dir(tmp_path, **fields)], field)


def test_config_json_nan_literal(refused, tmp_path):
    text = json.dumps(bundled_config()).replace('"num_key_value_heads": 4', '"num_key_value_heads": NaN')
    (tmp_path / "config.json").write_text(text)
    refused(["explain", "--", "--model-path", str(tmp_path)], "text_config.num_key_value_heads")


@pytest.mark.parametrize("snippet,field", [
    ("workload: {request_length: .nan, concurrency: 8}", "workload.request_length"),
    ("workload: {request_length: 4096, concurrency: -8}", "workload.concurrency"),
    ("workload: {request_length: 1e300, concurrency: 8}", "workload.request_length"),
    ("workload: {request_length: 4096, concurrency: 100000000000}", "workload.concurrency"),
])
def test_page_yaml_numbers(refused, tmp_path, snippet, field):
    from importlib import resources

    import yaml

    data = yaml.safe_load((resources.files("hybridplan") / "data" / "cookbooks" / "qwen3.8-27b.yaml").read_text())
    data.pop("workload", None)
    text = yaml.safe_dump(data, sort_keys=False) + snippet + "\n"  # the bad workload as the page text spells it
    page = tmp_path / "page.yaml"
    page.write_text(text)
    refused(["cookbook", "render", str(page)], field, json_at=2)


BIG = "9" * 5000  # past Python's 4,300-digit int-conversion limit: json.loads itself would raise
MARK = 271828182  # a placeholder the literal under test replaces in the file's text


@pytest.mark.parametrize("place,literal,field", [
    ({"num_hidden_layers": MARK}, BIG, "`text_config.num_hidden_layers`: an integer of 5,000 digits"),
    ({"num_hidden_layers": MARK}, "-" + BIG, "`text_config.num_hidden_layers`: an integer of 5,000 digits"),
    ({"num_hidden_layers": MARK}, str(1 << 63), "`text_config.num_hidden_layers`: an integer of 19 digits"),
    ({"num_hidden_layers": MARK}, "1" + "0" * 19, "`text_config.num_hidden_layers`: an integer of 20 digits"),
    ({"rope_parameters": {"factor": MARK}}, BIG, "`text_config.rope_parameters.factor`: an integer of 5,000"),
    ({"full_attn_idxs": [3, MARK]}, BIG, "`text_config.full_attn_idxs[1]`: an integer of 5,000"),
])
def test_config_json_integer_literals_are_bounded_before_conversion(refused, tmp_path, place, literal, field):
    text = json.dumps({**bundled_config(), "text_config": {**bundled_config()["text_config"], **place}})
    (tmp_path / "config.json").write_text(text.replace(str(MARK), literal))
    err = refused(["explain", "--", "--model-path", str(tmp_path)], field)
    assert "outside the int64 range (at most 9,223,372,036,854,775,807)" in err and len(err) < 400


def test_config_json_int64_bound_is_the_value_not_the_digit_count(refused, tmp_path, cli_json):
    # 19 digits within int64 convert, then the geometry bound names the field; a long digit run in a string is text
    cfg = bundled_config()
    cfg["text_config"]["num_hidden_layers"] = (1 << 63) - 1
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "note": BIG}))
    refused(["explain", "--", "--model-path", str(tmp_path)], "`text_config.num_hidden_layers`: Input should be less")
    (tmp_path / "config.json").write_text(json.dumps({**bundled_config(), "note": BIG}))
    code, out = cli_json("explain", "--json", "--", "--model-path", str(tmp_path))
    assert code == 0 and out["model"]["num_hidden_layers"] == 64
