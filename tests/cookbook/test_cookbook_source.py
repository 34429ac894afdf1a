"""Reading page YAML: schema violations and YAML errors name the file and the exact line."""

from __future__ import annotations

import pytest

from hybridplan.cookbook.pages import read_page_text
from hybridplan.cookbook.source import Unreadable

PAGE = """\
id: tiny
model: Tiny
supported_hardware: [h200]
match_dims:
  - id: quant
    title: Quantization
    options:
      - {id: fp8, label: FP8}
overlay_dims:
  - id: spec
    title: Spec
    options:
      - {id: none, label: None}
      - id: eagle
        label: EAGLE
        flags:
          - --speculative-algorithm EAGLE
          - when: {equals: {hw: h200}}
            then: [--speculative-num-steps 3]
cells:
  - match: {hw: h200, quant: fp8}
    flags: ["--model-path {{MODEL_NAME}}", --host 0.0.0.0]
model_names:
  - {value: Qwen/Qwen3.5-27B}
"""


def errors(text):
    loaded = read_page_text(text, "tiny.yaml")
    return [(e.line, ".".join(map(str, e.loc)), e.message) for e in loaded.errors]


def test_a_valid_page_loads():
    loaded = read_page_text(PAGE, "tiny.yaml")
    assert loaded.errors == () and loaded.page.id == "tiny"
    assert [h.id for h in loaded.page.hardware] == ["h200"]  # from the shared hardware list


def test_unknown_key_points_at_its_line():
    text = PAGE.replace("        label: EAGLE\n", "        label: EAGLE\n        lable: typo\n")
    assert errors(text) == [(16, "overlay_dims.0.options.1.lable", "unknown key")]


def test_bad_condition_inside_a_branch_points_at_the_branch():
    text = PAGE.replace("when: {equals: {hw: h200}}", "when: {equal: {hw: h200}}")
    [(line, loc, msg)] = errors(text)
    assert line == 18 and loc == "overlay_dims.0.options.1.flags.1.when"
    assert "exactly one of the keys" in msg


def test_bad_list_in_condition_points_at_the_value():
    text = PAGE.replace("when: {equals: {hw: h200}}", "when:\n              in: {hw: h200}")
    [(line, loc, msg)] = errors(text)
    assert (line, loc) == (19, "overlay_dims.0.options.1.flags.1.when.in.hw") and "list" in msg


def test_default_not_an_option_is_reported_on_the_row():
    text = PAGE.replace("    title: Spec\n", "    title: Spec\n    default: dflash\n")
    [(line, loc, msg)] = errors(text)
    assert line == 10 and loc == "overlay_dims.0" and "dflash" in msg


def test_missing_required_key():
    text = PAGE.replace("model: Tiny\n", "")
    assert errors(text) == [(1, "model", "required key is missing")]


def test_unknown_hardware_is_an_error_on_its_line():
    text = PAGE.replace("supported_hardware: [h200]", "supported_hardware:\n  - h200\n  - h900")
    [(line, loc, msg)] = errors(text)
    assert (line, loc) == (5, "supported_hardware.1") and "h900" in msg


def test_duplicate_keys_and_syntax_errors_are_unreadable_with_a_line():
    with pytest.raises(Unreadable, match=r"tiny.yaml:3: .*duplicate key 'model' \(first on line 2\)"):
        read_page_text(PAGE.replace("supported_hardware", "model: Again\nsupported_hardware", 1), "tiny.yaml")
    with pytest.raises(Unreadable, match=r"tiny.yaml:\d+: not valid YAML"):
        read_page_text(PAGE + "cells: [\n", "tiny.yaml")
