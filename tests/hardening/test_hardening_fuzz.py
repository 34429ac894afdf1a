"""Property-based fuzzing: the command parser, the config loader and the cookbook loader answer or raise a clean
error (BadInput / EngineRefusal), never another exception, and adversarial sizes stay within a memory bound."""

from __future__ import annotations

import json

import yaml
from hardening_support import PEAK_BOUND, bundled_config, measure
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridplan.errors import HybridPlanError

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])


def _flags() -> list[str]:
    from hybridplan.engine.api import for_version

    reg = for_version("0.5.23").registry()
    return sorted(o for o in reg.by_option if o.startswith("--") and o not in ("--model-path", "--model"))


numbers = st.one_of(
    st.integers(min_value=-(1 << 70), max_value=1 << 70).map(str),
    st.sampled_from(["0", "-1", "1", "2", "8", "64", "1k", "1Mi", "1T", "1e300", "nan", "inf", "-inf", "0.5", "1.5"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
values = st.one_of(numbers, st.text(max_size=12), st.sampled_from(["auto", "fp8_e4m3", "bfloat16", "DSPARK", "EAGLE",
                                                                   "extra_buffer", "no_buffer", "[1, 2]", "{}"]))


@st.composite
def launch_tokens(draw) -> list[str]:
    flags = _flags()
    tokens = ["--model-path", draw(st.sampled_from(["Qwen/Qwen3.8-27B", "moonshotai/Kimi-K3", "Qwen/Qwen3.5-27B"]))]
    for _ in range(draw(st.integers(0, 6))):
        tokens.append(draw(st.sampled_from(flags)))
        tokens += draw(st.lists(values, max_size=2))
    env = draw(st.lists(st.sampled_from(["SGLANG_PP_LAYER_PARTITION=1,2", "SGLANG_VLM_CACHE_SIZE_MB=99999999999999999",
                                         "SGLANG_ENABLE_SPEC_V2=1", "SGLANG_MM_FEATURE_CACHE_MB=-5"]), max_size=2))
    return env + draw(st.sampled_from([[], ["python", "-m", "sglang.launch_server"], ["sglang", "serve"]])) + tokens


def _answer_or_clean_error(fn) -> None:
    try:
        fn()
    except HybridPlanError:
        pass


@FUZZ
@given(tokens=launch_tokens(), budget=st.one_of(st.none(), st.floats(-100, 200)))
def test_command_parser_and_explain(tokens, budget):
    from hybridplan.engine.sglang.command import parse_command
    from hybridplan.engine.sglang.serving.explain import explain

    _answer_or_clean_error(lambda: explain(parse_command(tokens), budget=budget))


@FUZZ
@given(tokens=st.lists(st.text(max_size=20), max_size=30))
def test_command_parser_on_random_tokens(tokens):
    from hybridplan.engine.sglang.command import parse_command
    from hybridplan.engine.sglang.serving.loading import load

    _answer_or_clean_error(lambda: load(" ".join(tokens)))
    _answer_or_clean_error(lambda: load(parse_command(tokens)))


GEOMETRY_KEYS = ["num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
                 "linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
                 "linear_conv_kernel_dim", "full_attention_interval", "layer_types", "max_position_embeddings",
                 "rope_parameters", "rope_scaling", "mamba_ssm_dtype", "num_nextn_predict_layers", "text_config",
                 "model_type", "architectures", "vision_config", "quantization_config", "dtype"]
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(1 << 40), 1 << 40), st.floats(), st.text(max_size=8),
              st.sampled_from([0, -1, 1, 2, 4096, 4097, 10**9, 1e300, 0.5, "auto", "full_attention"])),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.sampled_from(GEOMETRY_KEYS + ["factor"]),
                                                                          inner, max_size=4)),
    max_leaves=12,
)


@FUZZ
@given(patch=st.dictionaries(st.sampled_from(GEOMETRY_KEYS), json_values, max_size=4),
       nested=st.booleans(), budget=st.floats(0, 120))
def test_config_loader_on_mutated_configs(tmp_path_factory, patch, nested, budget):
    from hybridplan.engine.sglang.serving.explain import explain

    cfg = bundled_config()
    (cfg["text_config"] if nested else cfg).update(patch)
    directory = tmp_path_factory.mktemp("cfg")
    (directory / "config.json").write_text(json.dumps(cfg, allow_nan=True))
    _answer_or_clean_error(lambda: explain(f"--model-path {directory}", budget=budget))


@FUZZ
@given(data=st.binary(max_size=400))
def test_config_loader_on_random_bytes(tmp_path_factory, data):
    from hybridplan.models.loader import load_model

    path = tmp_path_factory.mktemp("raw") / "config.json"
    path.write_bytes(data)
    _answer_or_clean_error(lambda: load_model(str(path)))


@FUZZ
@given(layers=st.integers(1, 1 << 40), heads=st.integers(-(1 << 20), 1 << 40), pp=st.integers(-8, 1 << 40),
       chunk=st.integers(-(1 << 40), 1 << 40), bs=st.integers(0, 5000))
def test_adversarial_sizes_stay_within_the_memory_bound(tmp_path_factory, layers, heads, pp, chunk, bs):
    from hybridplan.engine.sglang.serving.explain import explain

    cfg = bundled_config()
    cfg["text_config"].update(num_hidden_layers=layers, linear_num_value_heads=heads)
    directory = tmp_path_factory.mktemp("big")
    (directory / "config.json").write_text(json.dumps(cfg))
    command = (f"--model-path {directory} --pp-size {pp} --chunked-prefill-size {chunk} "
               f"--cuda-graph-bs-decode {' '.join(map(str, range(1, bs + 2)))}")
    peak, raised = measure(lambda: explain(command, budget=60.0))
    assert raised is None or isinstance(raised, HybridPlanError), repr(raised)
    assert peak < PEAK_BOUND


def _page_text() -> str:
    from importlib import resources

    return (resources.files("hybridplan") / "data" / "cookbooks" / "nemotron-nano-9b-v2.yaml").read_text()


def _mutate(node, path: list, value):
    """Replace the node at `path` (indices into lists and sorted dict keys, wrapped) with `value`."""
    if not path or not isinstance(node, (dict, list)) or not node:
        return value
    if isinstance(node, dict):
        key = sorted(node, key=str)[path[0] % len(node)]
        return {**node, key: _mutate(node[key], path[1:], value)}
    i = path[0] % len(node)
    return node[:i] + [_mutate(node[i], path[1:], value)] + node[i + 1:]


@FUZZ
@given(path=st.lists(st.integers(0, 50), min_size=1, max_size=6), value=json_values)
def test_cookbook_loader_on_mutated_pages(path, value):
    from hybridplan.cookbook.pages import _strict, read_page_text

    data = _mutate(yaml.safe_load(_page_text()), path, value)
    text = yaml.safe_dump(data, allow_unicode=True)
    _answer_or_clean_error(lambda: _strict(read_page_text(text, "fuzz.yaml")))


yaml_tokens = st.sampled_from(["a:", "- ", "&x ", "*x", "<<: *x", "[", "]", "{", "}", ",", "\n", "  ", "1", ".nan",
                               "!!python/name:os.system", "!!binary", "? ", "|", ">", "'", '"', "#", "---", "..."])


@FUZZ
@given(parts=st.lists(st.one_of(yaml_tokens, st.text(max_size=5)), max_size=40))
def test_cookbook_loader_on_random_yaml(parts):
    from hybridplan.cookbook.pages import read_page_text

    text = "".join(parts)
    peak, raised = measure(lambda: read_page_text(text, "fuzz.yaml"))
    assert raised is None or isinstance(raised, HybridPlanError), repr(raised)
    assert peak < PEAK_BOUND
