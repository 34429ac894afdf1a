"""`cookbook check`: the bundled pages pass; seeded defects are caught with the right rule, file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridplan.cookbook.source import Unreadable
from hybridplan.cookbook.validate import check_paths, check_text

# A small page in the bundled pages' style (two Qwen3.8-27B cells); each test breaks one thing.
PAGE = (Path(__file__).parent / "seeded.yaml").read_text()


def line_of(text: str, needle: str, nth: int = 1) -> int:
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return lines[nth - 1]


def findings(text: str, gpu: bool = True):
    return [f for f in check_text(text, "seeded.yaml", gpu=gpu) if f.severity != "info"]


def only(text: str, rule: str, gpu: bool = True):
    got = findings(text, gpu)
    assert got, f"expected a {rule} finding"
    assert {f.rule for f in got} == {rule}, [(f.rule, f.message) for f in got]
    return got


def test_the_seed_page_is_clean():
    assert findings(PAGE) == []


def test_bundled_pages_pass():
    """No errors; the one kind of warning left is Kimi-K3's docs-owned HiCache strips of --dcp-comm-backend, a flag
    only the docs' Playground composes (no Deploy cell carries it)."""
    report = check_paths([])
    failing = [(f.where, f.rule, f.message) for f in report.failing]
    assert all(f.severity == "warning" and f.rule == "strip-unused" and f.origin.endswith("kimi-k3.yaml")
               and "strips --dcp-comm-backend" in f.message for f in report.failing), failing
    assert sorted(f.message.split(" ")[0] for f in report.failing) == ["hicache=l2", "hicache=l3"]
    assert len(report.files) >= 4


def test_renamed_flag_is_unknown_in_the_pinned_engine():
    # the seeded page's build (profile 1cf2b8c, 0.5.18's flags) still knew the old spelling; 0.5.23 does not
    text = PAGE.replace("--cuda-graph-max-bs-decode 1", "--cuda-graph-max-bs 1")
    assert findings(text) == []
    text += "engine_version: '0.5.23'\n"
    [f] = only(text, "flag-unknown")
    assert f.line == line_of(text, "--cuda-graph-max-bs 1") and "not a flag of sglang 0.5.23" in f.message


def test_abbreviated_and_badly_typed_flags():
    text = PAGE.replace("--mem-fraction-static 0.85", "--mem-fraction 0.85")
    [f] = only(text, "flag-unknown")
    assert "abbreviation of --mem-fraction-static" in f.message
    # the EAGLE pin it spoils then falls back to the engine's default fraction, where the MTP head's own embedding
    # and lm_head (held while the pools are sized) leave no state pool: pin-fit findings beside the flag's
    got = findings(PAGE.replace("--mem-fraction-static 0.94", "--mem-fraction-static high"))
    [f] = [x for x in got if x.rule == "flag-unknown"]
    assert "invalid float value" in f.message and f.line == line_of(PAGE, "--mem-fraction-static 0.94")
    assert {x.rule for x in got} <= {"flag-unknown", "pin-fit"}


def test_duplicate_family_after_composition():
    text = PAGE.replace("      - {id: float32, label: float32, flags: [--mamba-ssm-dtype float32]}",
                        "      - {id: float32, label: float32, flags: [--mamba-ssm-dtype float32, "
                        "--kv-cache-dtype fp8_e4m3]}")
    got = only(text, "duplicate-flag")
    assert all("--kv-cache-dtype appears twice" in f.message for f in got)
    assert {f.selection["ssm-dtype"] for f in got} == {"float32"}


def test_strip_that_matches_nothing():
    text = PAGE.replace("then: [--mem-fraction-static]", "then: [--mem-fraction-static, --max-total-tokens]")
    [f] = only(text, "strip-unused")
    assert "spec=eagle strips --max-total-tokens" in f.message


def test_quant_id_drift_in_a_condition():
    """The docs' calculator tested quant === "nvfp4" after the ids split (#36020); nothing caught it."""
    text = PAGE.replace("{not: {prefix: {quant: nvfp4}}}", "{not: {equals: {quant: nvfp4}}}")
    [f] = only(text, "condition")
    assert "quant='nvfp4'" in f.message and f.line == line_of(text, "{not: {equals: {quant: nvfp4}}}")
    [f] = only(PAGE.replace("prefix: {quant: nvfp4}}}]}", "prefix: {quant: mxfp4}}}]}"), "condition")
    assert "prefix 'mxfp4' matches no option" in f.message


def test_default_that_is_disabled_and_a_row_that_disables_everything():
    text = PAGE.replace("      - {id: float32, label: float32, flags: [--mamba-ssm-dtype float32]}",
                        "      - {id: float32, label: float32, flags: [--mamba-ssm-dtype float32],\n"
                        "         disabled: {when: {equals: {hw: h200}}, reason: not here}}")
    [f] = only(text, "default")
    assert "ssm-dtype=float32" in f.message and f.line == line_of(text, "    default: float32")
    both = text.replace("      - {id: bfloat16, label: bfloat16, flags: [--mamba-ssm-dtype bfloat16]}",
                        "      - {id: bfloat16, label: bfloat16, flags: [--mamba-ssm-dtype bfloat16],\n"
                        "         disabled: {when: {equals: {hw: h200}}, reason: not here}}")
    assert {f.rule for f in findings(both)} == {"row-disabled"}


def test_cell_match_and_duplicate_cells():
    got = only(PAGE.replace("{hw: h200, quant: fp8}", "{hw: h200, quant: fp16}"), "cell-match")
    assert [(f.line, f.severity) for f in got if "quant='fp16' is not an option" in f.message] == [
        (line_of(PAGE, "{hw: h200, quant: fp8}"), "error")]
    assert any("no cell uses quant=fp8" in f.message for f in got)
    text = PAGE.replace("{hw: rtx5090, quant: nvfp4-fp4-head}", "{hw: h200, quant: fp8}")
    got = findings(text)
    assert {"cell-duplicate", "hardware"} <= {f.rule for f in got}


def test_injected_multi_node_flags_in_a_cell():
    [f] = only(PAGE.replace("      - --kv-cache-dtype fp8_e4m3\n", "      - --kv-cache-dtype fp8_e4m3\n      - --nnodes 2\n", 1),
               "cell-flags")
    assert "--nnodes is injected" in f.message


def test_verification_must_name_a_build_and_match_the_install():
    text = PAGE.replace("      build: 1cf2b8c54d81802abc15dcf23a29b9cc687bc01e\n", "", 1)
    assert {f.rule for f in findings(text)} == {"verification"}
    text = PAGE.replace("      build: 1cf2b8c54d81802abc15dcf23a29b9cc687bc01e\n", "      build: v0.5.17 @ 0abc123\n", 1)
    [f] = only(text, "install")
    assert "pins measured on v0.5.17 @ 0abc123 but the page installs" in f.message


def test_undeclared_placeholder():
    [f] = only(PAGE.replace("--port {{PORT}}", "--port {{SERVE_PORT}}", 1), "placeholder")
    assert "{{SERVE_PORT}}" in f.message


def test_explicit_size_next_to_a_pinned_ratio():
    """Docs §7.16: a ratio left next to --max-mamba-cache-size is stale."""
    text = PAGE.replace("      - --mem-fraction-static 0.85\n",
                        "      - --mem-fraction-static 0.85\n      - --mamba-full-memory-ratio 0.9\n"
                        "      - --max-mamba-cache-size 64\n")
    assert "stale-ratio" in {f.rule for f in findings(text, gpu=False)}


def test_engine_refusal_is_reported():
    """`MTP` is not a built-in algorithm name in sglang (only a plugin registers it)."""
    text = PAGE.replace("--speculative-algorithm EAGLE", "--speculative-algorithm MTP")
    got = findings(text, gpu=False)
    assert {f.rule for f in got} == {"engine"}
    assert "Unknown speculative algorithm name: MTP" in got[0].message


def test_a_measured_pin_the_engine_model_cannot_serve():
    """rtx5090 pins --max-running-requests 1; at mem fraction 0.5 the NVFP4 weights leave no state pool."""
    text = PAGE.replace("--mem-fraction-static 0.9\n", "--mem-fraction-static 0.5\n")
    got = only(text, "pin-fit")
    assert all(f.severity == "error" and "RTX 5090" in f.message for f in got)


def test_greyed_combination_the_model_says_fits_is_reported_as_info():
    text = PAGE.replace("    unsupported: true\n", "")
    infos = [f for f in check_text(text, "seeded.yaml") if f.rule == "unmeasured-reachable"]
    assert [f.selection["quant"] for f in infos] == ["nvfp4-fp4-head"] and infos[0].severity == "info"
    assert "unmeasured, possibly reachable: h200 x nvfp4-fp4-head" in infos[0].message


def test_schema_errors_and_unreadable_files(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(PAGE.replace("    title: Quantization\n", "    titel: Quantization\n"))
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: [unclosed\n")
    report = check_paths([str(bad)])
    assert report.exit_code == 1 and {f.rule for f in report.findings} == {"schema"}
    assert report.findings[0].line == line_of(PAGE, "  - id: quant")
    report = check_paths([str(tmp_path)])
    assert report.exit_code == 2 and len(report.unreadable) == 1 and "broken.yaml:2: not valid YAML" in report.unreadable[0]
    assert check_paths([str(tmp_path / "missing.yaml")]).exit_code == 2
    with pytest.raises(Unreadable):
        check_text("a: [", "x.yaml")


def test_multi_node_selections_are_sized_too():
    """The injected --node-rank/--dist-init-addr hold placeholders; the fit check sizes one rank without them."""
    from hybridplan.cookbook.pages import bundled_path

    text = bundled_path("kimi-k3").read_text()
    gb200_ll = ("      hw: gb200\n      pd-mode: unified\n      strategy: low-latency\n    flags:\n"
                "      - --trust-remote-code\n      - --model-path {{MODEL_NAME}}\n"
                "      - --tp-size 16\n      - --mem-fraction-static 0.85\n")
    assert text.count(gb200_ll) == 1  # the GB200 unified Low-Latency cell (4 nodes)
    got = [f for f in check_text(text.replace(gb200_ll, gb200_ll.replace("0.85", "0.3")), "kimi-k3.yaml")
           if f.severity == "error"]
    assert got and {f.rule for f in got} == {"pin-fit"}
    assert {(f.selection["hw"], f.selection["strategy"]) for f in got} == {("gb200", "low-latency")}
    assert all("GB200" in f.message and f.severity == "error" for f in got)
