"""The calculator's ratio in rendered commands: where it goes, which command it is computed on, and the docs'
calculator bugs (reference/cookbook-semantics.md §7) that must not come back."""

from __future__ import annotations

import pytest

from hybridplan.cookbook import load_page
from hybridplan.cookbook.pages import at_version
from hybridplan.cookbook.render import Delta, render

QWEN_SLOT = 153_944_064  # fp32 state bytes per slot (48 GDN layers); §7.2: never the 154.7 MB of dividing by 191


@pytest.fixture(scope="module")
def page():
    return load_page("qwen3.8-27b")


def ratio_flags(r):
    return [f for f in r.flags if f.startswith("--mamba-full-memory-ratio")]


def test_default_selection_pins_the_docs_worked_value_before_host(page):
    """Qwen defaults (S=5, D=0, fp32 state, fp8 KV, L=5120) -> 4.59; pin 64 x 5 = 320."""
    r = render(page, {"hw": "h200", "quant": "fp8"})
    assert ratio_flags(r) == ["--mamba-full-memory-ratio 4.59"]
    assert r.flags.index("--mamba-full-memory-ratio 4.59") == r.flags.index("--host 0.0.0.0") - 1
    base = r.ratio["base"]
    assert (base["slots_per_request"], base["draft_states_per_request"]) == (5, 0)
    assert (base["state_bytes_per_slot"], base["kv_bytes_per_token"]) == (QWEN_SLOT, 32_768)
    assert base["max_mamba_cache_size_pin"] == 320 and r.ratio["pinned"] == "calculator"


def test_h200_eagle_worked_example_and_the_pin_counts_s_only(page):
    """D=4 without ReplaySSM, S=5 -> 8.26. The pin is C x S = 320, not C x (S + D) = 576 (§7.1c)."""
    r = render(page, {"hw": "h200", "quant": "fp8", "spec": "eagle"})
    assert ratio_flags(r) == ["--mamba-full-memory-ratio 8.26"]
    assert r.ratio["base"]["draft_states_per_request"] == 4
    assert r.ratio["base"]["max_mamba_cache_size_pin"] == 64 * 5


def test_replayssm_prices_no_verify_states(page):
    """§7.1a: with --enable-linear-replayssm-spec, D = 0 (the docs counted D = 4 and doubled the state pool). The
    page's build (profile 1cf2b8c, 0.5.18's rule) charges the ReplaySSM ring on every state slot, so its balanced
    ratio prices the ring too; from 0.5.20 the ring is a fixed reservation and the ratio is the docs' own 4.59."""
    sel = {"hw": "rtx6000", "quant": "fp8", "spec": "eagle"}
    r = render(page, sel)
    assert "--enable-linear-replayssm-spec" in r.flags
    assert r.ratio["base"]["draft_states_per_request"] == 0
    assert ratio_flags(r) == ["--mamba-full-memory-ratio 4.68"]
    assert ratio_flags(render(at_version(page, "0.5.23"), sel)) == ["--mamba-full-memory-ratio 4.59"]


def test_dspark_d_is_gamma_plus_one(page):
    """§7.1b: DSPARK never emits --speculative-num-draft-tokens; D = gamma + 1 = 8 (the draft's block size 7),
    not the fallback 4. The docs calculator then shows 11.93 on target KV; the engine also folds the draft KV in."""
    r = render(page, {"hw": "h200", "quant": "fp8", "spec": "dspark"})
    base = r.ratio["base"]
    assert base["draft_states_per_request"] == 8
    assert base["docs_calculator_text"] == "11.93"
    assert base["kv_bytes_per_token"] > base["kv_bytes_per_token_target"] == 32_768
    assert ratio_flags(r) == [f"--mamba-full-memory-ratio {base['text']}"]


def test_worked_example_overlay_ratio_replaces_the_calculator_value_in_place(page):
    """rtx5090 DFLASH2 HT fp32: base S=4, D=8 -> the docs calculator's 11.01, replaced in place by the pinned 10."""
    r = render(page, {"hw": "rtx5090", "quant": "nvfp4-fp4-head", "spec": "dflash", "tier": "high-throughput",
                      "ssm-dtype": "float32"})
    base = r.ratio["base"]
    assert (base["slots_per_request"], base["draft_states_per_request"]) == (4, 8)
    assert base["docs_calculator_text"] == "11.01"
    assert ratio_flags(r) == ["--mamba-full-memory-ratio 10"] and r.ratio["pinned"] == "overlay"
    assert r.flags[r.flags.index("--mamba-full-memory-ratio 10") + 1] == "--host 0.0.0.0"
    # the cell alone (no overlays: S=5, D=0) prices differently: what the page shows beside the pinned value
    assert r.ratio["cell"]["slots_per_request"] == 5 and r.ratio["cell"]["text"] == "4.59"


def test_base_env_rides_with_the_base_flags(page):
    """§7.5: an env delta (skip-decode-lock: S 5 -> 4) changes the effective ratio only, never the Deploy one."""
    plain = render(page, {"hw": "h200", "quant": "fp8"})
    r = render(page, {"hw": "h200", "quant": "fp8"}, delta=Delta(env=("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1",)))
    assert r.ratio["base"] == plain.ratio["base"] and r.flags == plain.flags
    assert r.ratio["base"]["slots_per_request"] == 5
    assert r.ratio["effective"]["slots_per_request"] == 4
    assert r.effective["env"] == ["SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1"]
    eff = [f for f in r.effective["flags"] if f.startswith("--mamba-full-memory-ratio")]
    assert eff == [f"--mamba-full-memory-ratio {r.ratio['effective']['text']}"] and eff != ratio_flags(r)
    assert r.effective["command"].startswith("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK=1 \\\n")


def test_kv_dtype_auto_follows_the_checkpoint_not_a_quant_id(page):
    """§7.3: with the KV flag stripped, fp8 KV comes from the checkpoint's kv_cache_quant_algo (RadixArk NVFP4
    exports declare FP8), not from a quant id prefix; the BF16 checkpoint gets bf16 KV."""
    auto = Delta(strip=("--kv-cache-dtype",))
    nvfp4 = render(page, {"hw": "rtx6000", "quant": "nvfp4-bf16-head"}, delta=auto)
    bf16 = render(page, {"hw": "rtx6000", "quant": "bf16"}, delta=auto)
    assert not any(f.startswith("--kv-cache-dtype") for f in bf16.effective["flags"])
    assert nvfp4.ratio["effective"]["kv_bytes_per_token"] == 32_768
    assert bf16.ratio["effective"]["kv_bytes_per_token"] == 65_536
    assert bf16.ratio["effective"]["text"] == "2.29"


def test_tensor_parallel_is_priced_not_dropped(page):
    """§7.4: the docs calculator is TP1-only and silently pins nothing on TP != 1; the engine model prices TP."""
    r = render(page, {"hw": "h200", "quant": "bf16"}, delta=Delta(flags=("--tp-size 2",)))
    eff = r.ratio["effective"]
    assert eff["error"] is None and eff["text"] is not None
    assert eff["kv_bytes_per_token"] == 32_768 // 2  # fp8 KV, 4 KV heads over 2 ranks
    assert "--tp-size 2" in r.effective["flags"]


def test_no_ratio_leaves_the_recipe_as_written(page):
    r = render(page, {"hw": "h200", "quant": "fp8"}, pin_ratio=False)
    assert ratio_flags(r) == [] and r.ratio["base"] is None
