"""Composition rules: families, strip-and-replace in place, append after the cell, the ratio slot, deltas,
env merge and multi-node injection (cookbook-semantics §3.4-3.6)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hybridplan.cookbook import compose as C

CELL = ["--model-path {{MODEL_NAME}}", "--mem-fraction-static 0.9", "--attention-backend flashinfer",
        "--max-running-requests 1", "--host {{HOST_IP}}", "--port {{PORT}}"]


def test_family_and_value():
    assert C.family("--mem-fraction-static 0.9") == "--mem-fraction-static"
    assert C.family("--port=30000") == "--port"
    assert C.family("--trust-remote-code") == "--trust-remote-code"
    assert C.flag_value(CELL, "--mem-fraction-static") == "0.9"
    assert C.flag_value(["--port=30000"], "--port") == "30000"
    assert C.flag_value(["--trust-remote-code"], "--trust-remote-code") == ""
    assert C.flag_value(CELL, "--tp-size") is None


def test_without_strips_additions_follow_the_tail():
    out = C.overlay_compose(CELL, ("--speculative-algorithm EAGLE",), ())
    assert out == CELL + ["--speculative-algorithm EAGLE"]


def test_strip_replaces_in_place_and_appends_the_rest():
    add = ("--speculative-algorithm DFLASH", "--mem-fraction-static 0.895", "--mamba-ssm-dtype float32")
    out = C.overlay_compose(CELL, add, ("--mem-fraction-static",))
    assert out == ["--model-path {{MODEL_NAME}}", "--mem-fraction-static 0.895", "--attention-backend flashinfer",
                   "--max-running-requests 1", "--host {{HOST_IP}}", "--port {{PORT}}",
                   "--speculative-algorithm DFLASH", "--mamba-ssm-dtype float32"]


def test_a_family_the_cell_carries_twice_is_emitted_once():
    cell = ["--a 1", "--x 1", "--b 1", "--x 2"]
    assert C.overlay_compose(cell, ("--x 9",), ("--x",)) == ["--a 1", "--x 9", "--b 1"]


def test_strip_without_re_pin_removes():
    assert C.overlay_compose(CELL, (), ("--max-running-requests",)) == [f for f in CELL if "running" not in f]


def test_ratio_slot_sits_before_host_and_is_filled_or_dropped():
    slotted = C.with_ratio_slot(CELL)
    assert slotted.index(C.RATIO_SLOT) == CELL.index("--host {{HOST_IP}}")
    assert C.fill_ratio_slot(slotted, "4.59")[4] == "--mamba-full-memory-ratio 4.59"
    assert C.fill_ratio_slot(slotted, None) == CELL
    # a cell that sizes the pool itself gets no slot
    assert C.RATIO_SLOT not in C.with_ratio_slot(CELL + ["--max-mamba-cache-size 64"])
    assert C.RATIO_SLOT not in C.with_ratio_slot(CELL + ["--mamba-full-memory-ratio 0.9"])


def test_overlay_ratio_fills_the_slot_in_place_with_or_without_a_strip():
    """Docs bug §7.15: an overlay that adds a ratio without stripping the family emitted two ratio flags."""
    for strip in (("--mamba-full-memory-ratio",), ()):
        out = C.overlay_compose(C.with_ratio_slot(CELL), ("--mamba-full-memory-ratio 10",), strip)
        out = C.fill_ratio_slot(out, "11.01")
        assert [f for f in out if f.startswith("--mamba-full")] == ["--mamba-full-memory-ratio 10"]
        assert out.index("--mamba-full-memory-ratio 10") == out.index("--host {{HOST_IP}}") - 1


def test_strip_of_the_ratio_without_re_pin_keeps_the_calculator_value():
    """Docs bug §7.15: a strip without a re-pin left Deploy with no ratio while the Playground showed one."""
    out = C.fill_ratio_slot(C.overlay_compose(C.with_ratio_slot(CELL), (), ("--mamba-full-memory-ratio",)), "2.5")
    assert "--mamba-full-memory-ratio 2.5" in out


def test_explicit_size_from_an_overlay_drops_the_calculator_ratio():
    """Docs bug §7.16: a stale ratio next to --max-mamba-cache-size."""
    out = C.fill_ratio_slot(C.overlay_compose(C.with_ratio_slot(CELL), ("--max-mamba-cache-size 64",), ()), "4.59")
    assert not any(f.startswith("--mamba-full") for f in out) and "--max-mamba-cache-size 64" in out


def test_delta_replaces_in_place_and_inserts_new_families_before_host():
    out = C.apply_delta(CELL, ("--mem-fraction-static 0.8", "--kv-cache-dtype fp8_e4m3"), ("--attention-backend",))
    assert out == ["--model-path {{MODEL_NAME}}", "--mem-fraction-static 0.8", "--max-running-requests 1",
                   "--kv-cache-dtype fp8_e4m3", "--host {{HOST_IP}}", "--port {{PORT}}"]


def test_env_merge_replaces_a_key_in_place():
    assert C.merge_env(["A=1", "B=2"], ["B=3", "C=4"]) == ["A=1", "B=3", "C=4"]


def test_multi_node_trio_goes_after_the_strongest_anchor():
    trio = ["--nnodes 2", "--node-rank {{NODE_RANK}}", "--dist-init-addr {{NODE0_IP}}:20000"]
    flags = ["--model-path m", "--tp-size 16", "--enable-dp-attention", "--dp-size 2", "--host h"]
    assert C.inject_multi_node(flags, 2) == ["--model-path m", "--tp-size 16", "--enable-dp-attention", *trio,
                                             "--dp-size 2", "--host h"]
    assert C.inject_multi_node(["--model-path m", "--tp-size 8", "--port 1"], 2) == [
        "--model-path m", "--tp-size 8", *trio, "--port 1"]
    assert C.inject_multi_node(["--trust-remote-code", "--model-path m"], 4)[2] == "--nnodes 4"
    assert C.inject_multi_node(flags, 1) == flags
    assert C.inject_multi_node(flags + ["--nnodes 4"], 2) == flags + ["--nnodes 4"]


# ---------------------------------------------------------------------------------------------- properties

fams = st.sampled_from(["--a", "--b", "--c", "--d", "--e"])
flag_lists = st.lists(st.builds(lambda f, v: f"{f} {v}", fams, st.integers(0, 9)), max_size=6)


def _subsequence(small, big) -> bool:
    it = iter(big)
    return all(x in it for x in small)


@given(flag_lists, flag_lists, st.lists(fams, max_size=3, unique=True))
def test_compose_keeps_unstripped_cell_flags_in_order_and_uses_every_addition_once(cell, add, strip):
    out = C.overlay_compose(cell, tuple(add), tuple(strip))
    kept = [f for f in cell if C.family(f) not in strip]
    assert sorted(out) == sorted(kept + add)
    assert _subsequence(kept, out)
    spliced = {C.family(f) for f in cell if C.family(f) in strip}
    appended = [a for a in add if C.family(a) not in spliced]
    assert out[len(out) - len(appended):] == appended
    if not strip:
        assert out == cell + add


@given(flag_lists, flag_lists)
def test_delta_leaves_one_flag_per_delta_family_with_the_delta_values(base, delta):
    out = C.apply_delta(base, tuple(delta))
    for fam in {C.family(d) for d in delta}:
        assert [f for f in out if C.family(f) == fam] == [d for d in delta if C.family(d) == fam]
