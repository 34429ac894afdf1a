"""The planner's estimate constants as data: defaults with provenance, per-GPU overrides, substitution by a caller."""

from __future__ import annotations

import pytest

from hybridplan.errors import BadInput
from hybridplan.engine.sglang.serving.loading import load
from hybridplan.hardware.catalog import lookup
from hybridplan.engine.sglang.serving import constants as pc
from hybridplan.engine.sglang.serving.timeline import context_estimate_gib, for_loaded

CELL = ("python -m sglang.launch_server --model-path RadixArk/Qwen3.8-27B-NVFP4 --kv-cache-dtype fp8_e4m3 "
        "--mem-fraction-static 0.9 --attention-backend flashinfer --max-running-requests 1 --cuda-graph-max-bs-decode 1")


def test_defaults_carry_a_note_for_every_value():
    c = pc.constants_for()
    assert c.origin == "defaults" and (c.context_gib_single, c.context_gib_nccl) == (0.40, 0.19)
    assert c.headroom_offset_gib == 0.0 and c.activation_fragmentation == 0.15
    assert all(c.note(n) for n in pc.value_names())
    d = c.as_dict()
    assert set(d["values"]) == set(pc.value_names()) and d["values"]["graph_shape_mib"]["value"] == 2.0
    assert pc.constants_for("no-such-gpu") == c


def test_context_estimate_reads_the_constants():
    gpu = lookup("rtx4090")
    assert context_estimate_gib(gpu, 1) == pytest.approx(0.40)
    assert context_estimate_gib(gpu, 2) == pytest.approx(0.59)  # the RTX 4090 TP2 log: 23.52 - 22.93
    fitted = pc.constants_for().with_values("calibration", context_gib_single=1.0)
    assert context_estimate_gib(gpu, 2, fitted) == pytest.approx(1.19)


def test_substituted_constants_move_the_estimate_exactly():
    gpu = lookup("rtx5090")
    loaded = load(CELL, platform=gpu.platform())
    base, _ = for_loaded(loaded, gpu=gpu)
    fitted = pc.constants_for("rtx5090").with_values("results calibrate", headroom_offset_gib=0.5,
                                                      context_gib_single=1.0)
    moved, _ = for_loaded(loaded, gpu=gpu, constants=fitted)
    assert moved.constants.origin == "results calibrate" and "results calibrate" in moved.constants.note("context_gib_single")
    shift = 1.0 - pc.constants_for("rtx5090").context_gib_single  # the card's own measured context, replaced
    assert moved.pre_load_gib.value == pytest.approx(base.pre_load_gib.value - shift)
    offset = next(p for p in moved.headroom_parts if p.name == "calibration_offset")
    assert offset.nbytes == 1 << 29
    assert moved.max_safe_mem_fraction.value < base.max_safe_mem_fraction.value


def test_a_named_host_overlays_the_card_and_an_unknown_one_is_refused():
    stock, guarded = pc.constants_for("dgx-spark"), pc.constants_for("dgx-spark", "earlyoom")
    assert "earlyoom" in pc.host_names() and stock.unified_oom_reserve_fraction == 0.0
    assert guarded.unified_oom_reserve_fraction == 0.10 and guarded.origin == "defaults + hosts.earlyoom"
    assert "-m 10" in guarded.note("unified_oom_reserve_fraction") and guarded.margin_gib == stock.margin_gib
    with pytest.raises(BadInput, match="unknown host 'systemd-oomd'"):
        pc.constants_for("dgx-spark", "systemd-oomd")


def test_unknown_constant_names_are_refused():
    with pytest.raises(BadInput, match="unknown planner constant"):
        pc.constants_for().with_values("x", graph_memory=1.0)


def test_per_gpu_overrides_merge_over_the_defaults(monkeypatch):
    defaults, _ = pc._load()
    monkeypatch.setattr(pc, "_load", lambda: (defaults, {"rtx5090": {"context_gib_single": (0.95, "fitted: 3 runs")}}))
    c = pc.constants_for("rtx5090")
    assert c.context_gib_single == 0.95 and c.note("context_gib_single") == "fitted: 3 runs"
    assert c.origin == "defaults + gpus.rtx5090" and c.cublas_workspace_mib == defaults["cublas_workspace_mib"][0]
    assert pc.constants_for("h200").origin == "defaults"


@pytest.mark.parametrize("raw, message", [({"graph_memory": {"value": 1}}, "unknown planner constant"),
                                          ({"cublas_workspace_mib": 64}, "expected {value")])
def test_malformed_entries_are_bad_input(raw, message):
    with pytest.raises(BadInput, match=message):
        pc._entries(raw, "defaults")
