"""The bundled qwen3.8-27b page reproduces the docs page (reference/cookbook-semantics.md §6.1): cells, overlay
rules, greyed combinations with their reasons, badges, warnings and the worked Deploy example's command."""

from __future__ import annotations

import pytest

from hybridplan.cookbook import load_page
from hybridplan.cookbook.render import render

PAGE = "qwen3.8-27b"


@pytest.fixture(scope="module")
def page():
    return load_page(PAGE)


def r(page, **picks):
    picks = {k.replace("_", "-"): v for k, v in picks.items()}
    return render(page, picks, pin_ratio=False)


def test_selection_space_matches_the_docs(page):
    assert sorted(h.id for h in page.hardware) == sorted(["h200", "rtx6000", "rtx5090", "dgx-spark", "gb300"])
    assert [d.id for d in page.match_dims] == ["variant", "quant", "nodes"]
    assert [o.id for o in page.dimension("quant").options] == ["bf16", "fp8", "nvfp4-bf16-head", "nvfp4-fp4-head"]
    assert [(d.id, d.default_id, [o.id for o in d.options]) for d in page.overlay_dims] == [
        ("spec", "none", ["none", "eagle", "dspark", "dflash"]),
        ("tier", "low-latency", ["low-latency", "high-throughput"]),
        ("ssm-dtype", "float32", ["float32", "bfloat16"]),
    ]
    cells = {(c.match["hw"], c.match["quant"]) for c in page.lookup}
    assert cells == {("h200", "fp8"), ("h200", "bf16")} | {
        (hw, q) for hw in ("rtx6000", "dgx-spark", "gb300") for q in ("bf16", "fp8", "nvfp4-bf16-head", "nvfp4-fp4-head")
    } | {("rtx5090", "nvfp4-bf16-head"), ("rtx5090", "nvfp4-fp4-head")}


def test_worked_example_rtx5090_dflash2_high_throughput_fp32(page):
    """DFLASH2's strip replaces --mem-fraction-static 0.9 by 0.895 in place and the ratio slot by 10 in place;
    the other additions follow --port in row order. Badge Verified; the cell warn; mrr pinned to 1."""
    out = r(page, hw="rtx5090", quant="nvfp4-fp4-head", spec="dflash", tier="high-throughput", ssm_dtype="float32")
    assert out.reseated == ()
    assert list(out.flags) == [
        "--trust-remote-code", "--model-path RadixArk/Qwen3.8-27B-NVFP4", "--kv-cache-dtype fp8_e4m3",
        "--mem-fraction-static 0.895", "--attention-backend flashinfer", "--max-running-requests 1",
        "--cuda-graph-max-bs-decode 1", "--reasoning-parser qwen3", "--tool-call-parser qwen3_coder",
        "--mamba-full-memory-ratio 10", "--host 0.0.0.0", "--port 30000",
        "--speculative-algorithm DFLASH", "--speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2",
        "--speculative-num-draft-tokens 8", "--mamba-radix-cache-strategy extra_buffer_lazy",
        "--mamba-ssm-dtype float32",
    ]
    assert out.command.splitlines()[0] == "python -m sglang.launch_server \\"
    assert out.command.splitlines()[-1] == "  --mamba-ssm-dtype float32"
    assert out.badge == "verified" and out.badge_label == "Verified"
    assert out.warnings[0].startswith("This recipe serves ONE request at a time")
    assert "#mamba-ratio-calculator" in out.warnings[0]
    assert out.notes == ("DFlash is on and this recipe pins --max-running-requests to 1.",)
    assert out.ratio["pinned"] == "overlay"


def test_h200_eagle_resets_mrr_and_dflash_is_in_progress(page):
    out = r(page, hw="h200", quant="fp8", spec="eagle")
    assert "--enable-linear-replayssm-spec" not in out.flags  # ReplaySSM only on rtx5090/rtx6000/dgx-spark
    assert out.flags[-6:] == ("--speculative-algorithm EAGLE", "--speculative-num-steps 3",
                              "--speculative-eagle-topk 1", "--speculative-num-draft-tokens 4",
                              "--mamba-radix-cache-strategy extra_buffer", "--mamba-ssm-dtype float32")
    assert out.badge == "verified"
    [warn] = out.warnings
    assert "resets --max-running-requests to 48" in warn and "MTP" in warn
    assert r(page, hw="h200", quant="fp8", spec="dflash").badge == "in-progress"
    assert r(page, hw="gb300", quant="bf16", spec="dflash").badge_label == "Final Verification In Progress"
    assert r(page, hw="rtx6000", quant="bf16", spec="dflash").badge == "verified"


@pytest.mark.parametrize("ssm, mf", [("float32", "0.94"), ("bfloat16", "0.93")])
def test_rtx5090_eagle_pins_mem_fraction_in_place_and_replayssm(page, ssm, mf):
    out = r(page, hw="rtx5090", quant="nvfp4-bf16-head", spec="eagle", ssm_dtype=ssm)
    assert out.flags[3] == f"--mem-fraction-static {mf}"
    assert "--enable-linear-replayssm-spec" in out.flags
    assert sum(f.startswith("--mem-fraction-static") for f in out.flags) == 1


@pytest.mark.parametrize("quant, spec, tier, ssm_ok", [
    ("nvfp4-bf16-head", "dspark", "low-latency", False),
    ("nvfp4-bf16-head", "dflash", "high-throughput", False),
    ("nvfp4-bf16-head", "eagle", "low-latency", True),
    ("nvfp4-fp4-head", "dflash", "low-latency", False),
    ("nvfp4-fp4-head", "dflash", "high-throughput", True),
    ("nvfp4-fp4-head", "dspark", "low-latency", True),
])
def test_rtx5090_fp32_state_rule(page, quant, spec, tier, ssm_ok):
    out = r(page, hw="rtx5090", quant=quant, spec=spec, tier=tier, ssm_dtype="float32")
    fp32 = next(o for o in out.options["ssm-dtype"] if o.id == "float32")
    assert fp32.disabled is not ssm_ok
    if ssm_ok:
        assert out.selection["ssm-dtype"] == "float32" and out.reseated == ()
    else:
        assert fp32.reason.startswith("On the 32GB RTX 5090 this combination has no fp32 GDN state pool")
        assert out.selection["ssm-dtype"] == "bfloat16"
        [move] = out.reseated
        assert (move.dim, move.from_, move.to, move.reason) == ("ssm-dtype", "float32", "bfloat16", fp32.reason)


def test_rtx5090_dspark_and_dflash_bf16_pins(page):
    dspark = r(page, hw="rtx5090", quant="nvfp4-fp4-head", spec="dspark", ssm_dtype="bfloat16")
    assert dspark.flags[3] == "--mem-fraction-static 0.88"
    assert not any(f.startswith("--speculative-dspark-block-size") for f in dspark.flags)  # gamma from the draft
    assert "--speculative-draft-attention-backend flashinfer" in dspark.flags
    assert r(page, hw="rtx5090", quant="nvfp4-fp4-head", spec="dspark", ssm_dtype="float32").flags[3] == \
        "--mem-fraction-static 0.89"
    dflash = r(page, hw="rtx5090", quant="nvfp4-fp4-head", spec="dflash", tier="high-throughput",
               ssm_dtype="bfloat16")
    assert dflash.flags[3] == "--mem-fraction-static 0.91"
    assert "--chunked-prefill-size 1024" in dflash.flags[-6:]
    assert not any(f.startswith("--mamba-full-memory-ratio") for f in dflash.flags)  # no overlay ratio on bf16


def test_greyed_hardware_quant_pairs_carry_reasons(page):
    h200 = r(page, hw="h200", quant="fp8")
    quant = {o.id: o for o in h200.options["quant"]}
    assert not quant["fp8"].disabled and not quant["bf16"].disabled
    assert quant["nvfp4-bf16-head"].disabled and "no FP4 tensor cores" in quant["nvfp4-bf16-head"].reason
    rtx = {o.id: o for o in r(page, hw="rtx5090", quant="nvfp4-fp4-head").options["quant"]}
    assert rtx["fp8"].disabled and rtx["bf16"].disabled and "32GB RTX 5090" in rtx["fp8"].reason
    assert not any(o.disabled for o in r(page, hw="gb300", quant="bf16").options["quant"])


def test_a_greyed_pick_is_reseated_with_a_note(page):
    out = r(page, hw="rtx5090", quant="fp8", spec="eagle")
    assert out.selection["quant"] == "nvfp4-bf16-head"
    [move] = out.reseated
    assert move.as_dict() == {"dim": "quant", "from": "fp8", "to": "nvfp4-bf16-head",
                              "reason": next(o.reason for o in out.options["quant"] if o.id == "fp8")}


def test_unpicked_match_dims_snap_to_a_cell_that_agrees_with_the_picks(page):
    out = r(page, quant="nvfp4-fp4-head")  # the flagship is h200, which has no NVFP4 cell
    assert out.selection["quant"] == "nvfp4-fp4-head" and out.selection["hw"] != "h200"
    assert out.reseated == () and out.cell is not None


def test_tiers_and_docker_form(page):
    out = render(page, {"hw": "dgx-spark", "quant": "bf16", "tier": "high-throughput"}, docker=True,
                 placeholders={"PORT": "8000"}, pin_ratio=False)
    lines = out.command.splitlines()
    assert lines[:4] == ["docker run --gpus all \\", "  --shm-size 32g \\", "  -p 8000:8000 \\",
                         "  -v ~/.cache/huggingface:/root/.cache/huggingface \\"]
    assert '  --env "HF_TOKEN=<your-hf-token>" \\' in lines
    assert "  lmsysorg/sglang:dev-qwen38-27b-dflash2 \\" in lines
    assert "  python -m sglang.launch_server \\" in lines
    assert "    --port 8000 \\" in lines and "    --mem-fraction-static 0.80 \\" in lines
    assert "--mamba-radix-cache-strategy extra_buffer_lazy" in out.flags
    assert out.model_name == "Qwen/Qwen3.8-27B" and out.docker_image == "lmsysorg/sglang:dev-qwen38-27b-dflash2"
    assert out.curl.startswith("curl http://localhost:30000/v1/chat/completions")
    assert '"model": "Qwen/Qwen3.8-27B"' in out.curl


def test_render_json_payload_has_the_documented_keys(page):
    d = r(page, hw="h200", quant="bf16").as_dict()
    for key in ("selection", "reseated", "flags", "env", "command", "badge", "warnings", "options"):
        assert key in d
    assert d["options"]["quant"][0] == {"id": "bf16", "label": "BF16", "disabled": False, "reason": None}
    assert d["env"] == [] and d["badge"] == "verified"
