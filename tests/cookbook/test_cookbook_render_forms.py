"""Command forms beyond the Qwen page: multi-node injection (cell nnodes and a nodes dim), fabric flags, AMD docker,
hints, redirect cells, no-cell selections, placeholders and selection-dependent measurements (Kimi-K3 page and a
small written page)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hybridplan.cookbook import load_page
from hybridplan.cookbook.matrix import selection_space
from hybridplan.cookbook.pages import read_page_text
from hybridplan.cookbook.render import render, resolve_selection
from hybridplan.cookbook.selection import find_cell

K3 = load_page("kimi-k3")

SPARK = """\
id: spark
model: Qwen3.8-27B
supported_hardware: [dgx-spark]
match_dims:
  - id: nodes
    title: Nodes
    options:
      - {id: single, label: Single Node}
      - {id: multi-2, label: 2 Nodes}
cells:
  - match: {hw: dgx-spark, nodes: [single, multi-2]}
    flags: ["--model-path {{MODEL_NAME}}", --tp-size 2, --host 0.0.0.0, --port 30000]
model_names: [{value: Qwen/Qwen3.8-27B}]
docker_images: [{value: "lmsysorg/sglang:spark"}]
multi_node_hints:
  dgx-spark: [Connect the two Sparks with the QSFP cable first.]
"""


def test_multi_node_cell_injects_the_trio_after_tp_and_a_header():
    r = render(K3, {"hw": "gb300", "strategy": "balanced", "spec": "none"}, pin_ratio=False)
    assert r.nnodes == 2
    assert list(r.flags[:6]) == ["--trust-remote-code", "--model-path moonshotai/Kimi-K3", "--tp-size 8",
                                 "--nnodes 2", "--node-rank <node-rank>", "--dist-init-addr <node0-ip>:20000"]
    lines = r.command.splitlines()
    assert lines[0] == "# Multi-node (2 nodes): run this command on every node."
    assert lines[3] == "# VLM transport: Auto -> CUDA VMM with IMEX, otherwise CPU (up to 1 GiB HBM)."  # the docs' hint
    assert r.badge == "in-progress"


def test_nodes_dimension_and_fabric_flags_in_docker():
    page = read_page_text(SPARK, "spark.yaml").page
    single = render(page, {"nodes": "single"}, docker=True, pin_ratio=False)
    assert single.nnodes == 1 and "-p 30000:30000" in single.command and "--network host" not in single.command
    multi = render(page, {"nodes": "multi-2"}, docker=True, pin_ratio=False)
    text = multi.command
    assert multi.nnodes == 2 and "--network host" in text and "-p 30000" not in text
    for fabric in ("--ulimit memlock=-1:-1", "--cap-add IPC_LOCK", "--device /dev/infiniband"):
        assert f"  {fabric} \\" in text
    assert "# Connect the two Sparks with the QSFP cable first." in text
    # undeclared placeholders stay for the user to fill in
    assert "    --node-rank {{NODE_RANK}} \\" in text and "{{NODE0_IP}}:20000" in text


def test_amd_docker_form_and_env():
    r = render(K3, {"hw": "mi355x", "spec": "none"}, docker=True, pin_ratio=False)
    lines = r.command.splitlines()
    assert lines[:5] == ["# VLM transport: Auto -> CPU on this topology.", "docker run \\",
                         "  --device=/dev/kfd --device=/dev/dri \\", "  --group-add video \\",
                         "  --cap-add=SYS_PTRACE --security-opt seccomp=unconfined \\"]
    assert "  --env SGLANG_MLA_DECODE_TUNE=1 \\" in lines  # the Non-Spec option's env on MI35x
    assert "  lmsysorg/sglang-rocm:v0.5.18-rocm720-mi35x-20260903 \\" in lines
    assert r.selection["strategy"] == "balanced"  # MI35x has only Balanced: the flagship's low-latency reseats


def test_redirect_cell_renders_only_its_banner():
    r = render(K3, {"hw": "b300", "strategy": "high-throughput"})
    assert r.redirect and r.command == "" and r.flags == ()
    assert r.warnings[0].startswith("High-Throughput is the large-scale lane: pick a Cluster Size")


def test_measurements_follow_the_selection():
    r = render(K3, {"hw": "b300", "strategy": "low-latency", "spec": "dspark"}, pin_ratio=False)
    assert r.badge == "verified" and r.verification["build"] == "v0.5.18 @ 71de97b2"
    assert [(m["workload"]["concurrency"], m["tpot_ms"]) for m in r.verification["measurements"]] == [
        ([1], 2.84), ([16], 9.88)]
    r = render(K3, {"hw": "b300", "strategy": "balanced", "spec": "none"}, pin_ratio=False)
    assert [m["max_running_requests"] for m in r.verification["measurements"]] == [101]


def test_placeholder_overrides_and_the_dflash_option_is_always_greyed():
    r = render(K3, {"hw": "h200", "strategy": "high-throughput", "spec": "dflash"},
               placeholders={"NETWORK_IFACE": "ib0", "LOCAL_IP": "10.0.0.2"}, pin_ratio=False)
    assert "NCCL_SOCKET_IFNAME=ib0" in r.env and "SGLANG_HOST_IP=10.0.0.2" in r.env
    assert r.selection["spec"] == "none" and r.reseated[0].reason.startswith("No K3 DFLASH draft checkpoint published yet")
    assert r.nnodes == 4 and "--nnodes 4" in r.flags


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(list(selection_space(load_page("qwen3.8-27b")))))
def test_every_pick_lands_on_a_cell_and_reseating_is_idempotent(picks):
    page = load_page("qwen3.8-27b")
    sel, moves = resolve_selection(page, picks)
    assert find_cell(page, sel) is not None
    assert resolve_selection(page, sel) == (sel, [])
    assert {m.dim for m in moves} <= set(picks)
    for m in moves:
        assert picks[m.dim] == m.from_ and sel[m.dim] == m.to


def test_the_matrix_starts_each_landed_selection_from_its_own_resolution():
    """landings reuses a pick combination's resolution for the landed selection equal to it: the same answer (and
    key order) a fresh resolve_selection gives, on every bundled page; the qwen page lands 320 picks on 251."""
    from hybridplan.cookbook import bundled_ids
    from hybridplan.cookbook.matrix import landings

    for pid in bundled_ids():
        page = load_page(pid)
        land = list(landings(page))
        for key, _, (sel, moves) in land:
            fresh = resolve_selection(page, dict(key))
            assert (list(sel.items()), moves) == (list(fresh[0].items()), fresh[1])
        if pid == "qwen3.8-27b":
            assert (len(land), sum(len(p) for _, p, _ in land)) == (251, 320)


def test_the_matrix_row_is_the_same_without_the_deploy_panel_extras():
    """panel=False skips the calculator view, examples, benchmark/accuracy commands, install, build warnings and curl;
    every field a matrix row or the checker reads is what the full render gives (Kimi-K3: measured, multi-node)."""
    from hybridplan.cookbook.matrix import entry, landings
    from hybridplan.cookbook.render import render_landed

    for _, picks, (sel, moves) in list(landings(K3))[::40]:
        lean, full = render_landed(K3, sel, moves, panel=False), render(K3, picks[0])
        assert entry(lean, 1) == entry(full, 1)
        assert (lean.verification, lean.model_name, lean.nnodes) == (full.verification, full.model_name, full.nnodes)
        assert (lean.calculator, lean.examples, lean.benchmarks, lean.accuracy, lean.install, lean.curl) == \
            (None, (), (), (), None, None)
    assert full.calculator is not None and full.install is not None and full.curl


def test_benchmark_commands_reproduce_the_measured_workload():
    r = render(K3, {"hw": "b300", "strategy": "low-latency", "spec": "none"}, pin_ratio=False)
    assert [b["concurrency"] for b in r.benchmarks] == [1, 16]
    c16 = r.benchmarks[1]["command"]
    assert "--random-input-len 8192 --random-output-len 1024" in c16
    assert "--num-prompts 80 --max-concurrency 16" in c16  # numPromptsByConc 16 -> 80
    qwen = render(load_page("qwen3.8-27b"), {"hw": "rtx6000", "quant": "fp8"}, pin_ratio=False)
    [b] = qwen.benchmarks
    assert "--num-prompts 4 --max-concurrency 1" in b["command"]  # 4 requests of 8192 / 1024 (#35065)
    assert "{{" not in b["command"]


def test_bundled_pages_round_trip_through_their_data():
    from hybridplan.cookbook import bundled_ids
    from hybridplan.cookbook.schema import Page

    for pid in bundled_ids():
        page = load_page(pid)
        again = Page.model_validate(page.model_dump(mode="json", by_alias=True))
        assert again == page and again.lookup == page.lookup


ROWS = """\
id: rows
model: Qwen3.8-27B
supported_hardware: [h200, gb300]
overlay_dims:
  - id: tier
    title: Serving Strategy
    strip: [--mamba-radix-cache-strategy]
    options:
      - {id: low-latency, label: Low Latency, flags: [--mamba-radix-cache-strategy extra_buffer]}
      - {id: lazy, label: Lazy, flags: [--mamba-radix-cache-strategy extra_buffer_lazy]}
      - id: blackwell-only
        label: Blackwell only
        show_when: {equals: {hw: gb300}}
        flags: [--mamba-radix-cache-strategy no_buffer]
cells:
  - match: {hw: [h200, gb300]}
    flags: ["--model-path {{MODEL_NAME}}", --mamba-radix-cache-strategy no_buffer, --host 0.0.0.0]
model_names: [{value: Qwen/Qwen3.8-27B-FP8}]
"""


def test_row_level_strip_owns_the_family():
    """Docs §7.14: a row-level stripPrefixes was declared but never applied; here it replaces the cell's pin."""
    page = read_page_text(ROWS, "rows.yaml").page
    r = render(page, {"hw": "h200", "tier": "lazy"}, pin_ratio=False)
    assert list(r.flags) == ["--model-path Qwen/Qwen3.8-27B-FP8", "--mamba-radix-cache-strategy extra_buffer_lazy",
                             "--host 0.0.0.0"]


def test_a_hidden_pick_is_reseated_and_hidden_options_are_not_listed():
    page = read_page_text(ROWS, "rows.yaml").page
    r = render(page, {"hw": "h200", "tier": "blackwell-only"}, pin_ratio=False)
    assert r.selection["tier"] == "low-latency"
    assert [m.as_dict() for m in r.reseated] == [{"dim": "tier", "from": "blackwell-only", "to": "low-latency",
                                                  "reason": "hidden for the current selection"}]
    assert [o.id for o in r.options["tier"]] == ["low-latency", "lazy"]
    shown = render(page, {"hw": "gb300", "tier": "blackwell-only"}, pin_ratio=False)
    assert shown.reseated == () and "--mamba-radix-cache-strategy no_buffer" in shown.flags
