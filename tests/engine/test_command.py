"""Reading the command as the user would run it, and the engine's argparse rules."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridplan.engine.sglang.command import parse_command
from hybridplan.engine.registry import human_readable_int, parse_argv
from hybridplan.engine.sglang.behaviours import VERSIONS
from hybridplan.engine.sglang.flag_history import registry
from hybridplan.errors import BadInput

REG = registry(VERSIONS[-1])  # the newest release: flags.json as shipped


def test_env_program_and_flags():
    cmd = parse_command("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1 CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server "
                        "--model-path Qwen/Qwen3.8-27B --tp=2 \\\n  --mem-fraction-static 0.85 2>&1 | tee log")
    assert cmd.env == (("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK", "1"), ("CUDA_VISIBLE_DEVICES", "0,1"))
    assert cmd.program == ("python3", "-m", "sglang.launch_server")
    assert cmd.argv == ("--model-path", "Qwen/Qwen3.8-27B", "--tp=2", "--mem-fraction-static", "0.85")
    assert cmd.dropped[:2] == ("2>&1", "|")


def test_sglang_serve_positional_model():
    cmd = parse_command("sglang serve Qwen/Qwen3.8-27B --tp 2")
    assert cmd.argv[:2] == ("--model-path", "Qwen/Qwen3.8-27B") and cmd.positional_model


def test_bare_flags_and_full_python_path():
    assert parse_command("--model-path x").program == ("python", "-m", "sglang.launch_server")
    assert parse_command("/usr/bin/python3.11 -m sglang.launch_server --model-path x").argv == ("--model-path", "x")


def test_not_a_server_command():
    with pytest.raises(BadInput, match="not an SGLang server command"):
        parse_command("vllm serve foo")


@pytest.mark.parametrize("argv,dest,value", [
    (["--model-path", "m", "--tp", "4"], "tp_size", 4),  # unique prefix of --tp-size (allow_abbrev)
    (["--model-path", "m", "--tensor-parallel-size=8"], "tp_size", 8),
    (["--model", "m"], "model_path", "m"),
    (["--model-path", "m", "--max-total-tokens", "25.6k"], "max_total_tokens", 25600),
    (["--model-path", "m", "--max-total-tokens", "1Mi"], "max_total_tokens", 1 << 20),
    (["--model-path", "m", "--disable-radix-cache"], "disable_radix_cache", True),
    (["--model-path", "m", "--no-enable-tf32-matmul"], "enable_tf32_matmul", False),
    (["--model-path", "m", "--mem-fraction-static", "0.8", "--mem-fraction-static", "0.9"], "mem_fraction_static", 0.9),
])
def test_argparse_semantics(argv, dest, value):
    assert parse_argv(REG, argv).values[dest] == value


@pytest.mark.parametrize("argv,msg", [
    (["--tp", "2"], "the following arguments are required: --model-path/--model"),
    (["--model-path", "m", "--bogus"], "unrecognized arguments: --bogus"),
    (["--model-path", "m", "--tp-size", "two"], "argument --tp-size/--tensor-parallel-size: invalid int value: 'two'"),
    (["--model-path", "m", "--kv-cache-dtype", "fp9"], "invalid choice: 'fp9'"),
    (["--model-path", "m", "--mem-fraction-static"], "expected one argument"),
    (["--model-path", "m", "--disable-radix-cache=yes"], "ignored explicit argument 'yes'"),
    (["--model-path", "m", "--mamba"], "ambiguous option: --mamba could match"),
    (["--model-path", "m", "--max-total-tokens", "1.5Ki"], "Decimals are not allowed with IEC suffixes"),
])
def test_argparse_errors(argv, msg):
    with pytest.raises(BadInput, match=msg.replace("(", r"\(").replace(")", r"\)")):
        parse_argv(REG, argv)


def test_human_readable_int_matches_the_engine_examples():
    assert [human_readable_int(v) for v in ("1k", "1M", "25.6k", "1Ki", "1Mi", "42")] == [1000, 10**6, 25600, 1024, 1 << 20, 42]


_values = st.text(alphabet=st.characters(whitelist_categories=("L", "N"), whitelist_characters="-_./:,=@"), min_size=1,
                  max_size=12).filter(lambda s: not s.startswith("-"))
_env = st.lists(st.tuples(st.from_regex(r"[A-Z][A-Z0-9_]{0,10}", fullmatch=True), _values), max_size=3)


@settings(max_examples=200)
@given(env=_env, model=_values, tp=st.integers(1, 64), mfs=st.floats(0.1, 0.99), eq=st.booleans())
def test_text_round_trip(env, model, tp, mfs, eq):
    """Parsing the printed command gives back the same env and flags, and the same engine values."""
    argv = ["--model-path", model] + ([f"--tp-size={tp}"] if eq else ["--tp-size", str(tp)]) + ["--mem-fraction-static", repr(mfs)]
    text = " ".join([f"{k}={shlex.quote(v)}" for k, v in env] + ["python", "-m", "sglang.launch_server"]
                    + [shlex.quote(a) for a in argv])
    cmd = parse_command(text)
    assert cmd.env == tuple(env) and cmd.argv == tuple(argv)
    again = parse_command(cmd.text())
    assert again == cmd
    values = parse_argv(REG, cmd.argv).values
    assert values["tp_size"] == tp and values["mem_fraction_static"] == mfs and values["model_path"] == model
