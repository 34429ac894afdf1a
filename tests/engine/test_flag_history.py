"""Per-release flag registries rebuilt from flag_history.json: the option sets and the parser messages each
release gives (counts and messages as each release's own ServerArgs.add_cli_args parser has them)."""

from __future__ import annotations

import json

import pytest

from hybridplan.engine.sglang.behaviours import VERSIONS
from hybridplan.engine.sglang.flag_history import history, registry_json, release_delta
from hybridplan.engine.registry import parse_argv, registry_from_json
from hybridplan.errors import BadInput

# option strings of each release's serve parser (without -h/--help)
OPTION_COUNTS = {"0.5.18": 506, "0.5.19": 521, "0.5.20": 513, "0.5.21": 532, "0.5.22": 544, "0.5.23": 559}


@pytest.fixture(scope="module")
def registries():
    """Each release's registry as engine/registry.py indexes it from its JSON text (as flags.json is read)."""
    return {v: registry_from_json(json.loads(json.dumps(registry_json(v)))) for v in VERSIONS}


M = ["--model-path", "m"]


def _parse(reg, argv: list[str]) -> dict:
    """The values the release's parser sets besides --model-path."""
    values = dict(parse_argv(reg, M + argv).values)
    values.pop("model_path")
    return values


def _options(v: str) -> set[str]:
    return {o for f in registry_json(v)["flags"] for o in f["options"]}


def test_option_counts_per_release():
    assert {v: len(_options(v)) for v in VERSIONS} == OPTION_COUNTS


def test_newest_release_is_the_committed_registry():
    base = json.loads(json.dumps(registry_json("0.5.23")))
    from importlib import resources

    committed = json.loads((resources.files("hybridplan.engine.sglang") / "flags.json").read_text())
    assert base["flags"] == committed["flags"]
    assert history()["base"] == "0.5.23"


def test_removed_in_0_5_20():
    removed = set(release_delta("0.5.20")["removed"])
    assert {"--mamba-scheduler-strategy", "--enable-gdn-replayssm-spec", "--cuda-graph-bs", "--cuda-graph-max-bs",
            "--disable-piecewise-cuda-graph", "--enable-breakable-cuda-graph", "--enforce-piecewise-cuda-graph",
            "--piecewise-cuda-graph-compiler", "--piecewise-cuda-graph-max-tokens",
            "--piecewise-cuda-graph-tokens"} <= removed
    assert len(removed) == 23


def test_added_in_0_5_22():
    added = set(release_delta("0.5.22")["added"])
    assert {"--attn-dp-size", "--attention-data-parallel-size", "--enable-kv-cache-sharding"} <= added
    assert release_delta("0.5.22")["removed"] == ("--cuda-graph-tc-compiler",)
    assert release_delta("0.5.18") == {"added": (), "removed": ()}


def test_old_aliases_resolve_to_their_dests(registries):
    r19 = registries["0.5.19"]
    assert _parse(r19, ["--enable-gdn-replayssm-spec"]) == {"enable_linear_replayssm_spec": True}
    assert _parse(r19, ["--mamba-scheduler-strategy", "no_buffer"]) == {
        "mamba_radix_cache_strategy": "no_buffer"}
    assert _parse(r19, ["--cuda-graph-bs", "1", "2", "4"]) == {"cuda_graph_bs_decode": [1, 2, 4]}


def test_removed_flags_get_each_releases_parser_message(registries):
    for v in ("0.5.20", "0.5.23"):
        with pytest.raises(BadInput, match=r"^unrecognized arguments: --enable-gdn-replayssm-spec$"):
            _parse(registries[v], ["--enable-gdn-replayssm-spec"])
        # a removed alias that is now a prefix of two flags: argparse's abbreviation rule makes it ambiguous
        with pytest.raises(BadInput, match=r"^ambiguous option: --cuda-graph-bs could match "
                                           r"--cuda-graph-bs-decode, --cuda-graph-bs-prefill$"):
            _parse(registries[v], ["--cuda-graph-bs", "8"])
    with pytest.raises(BadInput, match=r"^unrecognized arguments: --attn-dp-size 2$"):
        _parse(registries["0.5.21"], ["--attn-dp-size", "2"])
    assert _parse(registries["0.5.22"], ["--attn-dp-size", "2"]) == {"attn_dp_size": 2}


def test_changed_choices(registries):
    """--kv-cache-dtype fp4_e2m1 is refused from 0.5.21; tc_piecewise from 0.5.22."""
    assert _parse(registries["0.5.20"], ["--kv-cache-dtype", "fp4_e2m1"]) == {"kv_cache_dtype": "fp4_e2m1"}
    with pytest.raises(BadInput, match=r"argument --kv-cache-dtype: invalid choice: 'fp4_e2m1'"):
        _parse(registries["0.5.21"], ["--kv-cache-dtype", "fp4_e2m1"])
    assert _parse(registries["0.5.21"], ["--cuda-graph-backend-prefill", "tc_piecewise"])
    with pytest.raises(BadInput, match=r"invalid choice: 'tc_piecewise'"):
        _parse(registries["0.5.22"], ["--cuda-graph-backend-prefill", "tc_piecewise"])


def test_every_release_abbreviates():
    assert history()["allow_abbrev"] == {v: True for v in VERSIONS}
