"""DCP and PP in the balance point: rows hold dcp logical tokens; the stage with the largest KV cell bounds T."""

from __future__ import annotations

from hybridplan.engine.sglang.command import parse_command
from hybridplan.engine.sglang.serving.ratio import balanced_ratio
from tests.conftest import resolve_cmd

K3 = "--model-path moonshotai/Kimi-K3 --tp-size 8 --kv-cache-dtype bf16"


def test_kimi_k3_docs_worked_values_with_and_without_dcp():
    # cookbook-semantics.md §6.3: K3 B300 (attn TP 8, fp32 state, bf16 KV, L=11264, S=5): LL NOSPEC 0.9, DCP8 7.21
    plain = balanced_ratio(parse_command(K3), request_length=11264, concurrency=64)
    dcp8 = balanced_ratio(parse_command(K3 + " --dcp-size 8"), request_length=11264, concurrency=64)
    assert plain["mamba_full_memory_ratio_text"] == "0.9"
    assert dcp8["mamba_full_memory_ratio_text"] == "7.21"
    assert dcp8["mamba_full_memory_ratio"] == plain["mamba_full_memory_ratio"] * 8


def test_pp_reports_the_binding_stage_cell():
    from hybridplan.engine.api import for_version

    # Nemotron Nano 9B v2: attention layers 14, 21, 30, 39 of 56 -> PP3 stages [0,18) [18,37) [37,56) hold 1, 2, 1
    args, geo, draft = resolve_cmd("--model-path nvidia/NVIDIA-Nemotron-Nano-9B-v2 --pp-size 3")
    engine = for_version(args.version)
    cells = [engine.kv_cell(args, geo, draft, stage=s) for s in range(3)]
    assert [c.layers for c in cells] == [1, 2, 1]
    assert engine.binding_cell(args, geo, draft).layers == 2


def test_explain_warns_when_the_slack_cannot_hold_the_headroom(cli_json):
    code, d = cli_json("explain", "--json", "--gpu", "h200", "--", "--model-path", "Qwen/Qwen3.8-27B",
                       "--mem-fraction-static", "0.999")
    assert code == 0 and d["memory"]["timeline"]["slack_fits_headroom"] is False
    assert any(w.startswith("--mem-fraction-static 0.999 leaves 0.14 GiB") for w in d["warnings"])
    code, d = cli_json("explain", "--json", "--gpu", "h200", "--", "--model-path", "Qwen/Qwen3.8-27B",
                       "--mem-fraction-static", "0.85")
    assert d["memory"]["timeline"]["slack_fits_headroom"] is True
    assert not any("--mem-fraction-static 0.85 leaves" in w for w in d["warnings"])
