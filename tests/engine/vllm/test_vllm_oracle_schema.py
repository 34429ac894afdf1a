"""The vLLM oracle's typed boundary (conformance/vllm/schema.py): what the driver reads and writes is checked on
both sides, and a malformed answer is refused with one line naming the field, before any comparison."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from hybridplan.conformance.oracle import oracle
from hybridplan.conformance.runner import NoEngine, read_answer
from hybridplan.conformance.vllm import schema
from hybridplan.conformance.vllm.scenarios import scenarios
from hybridplan.conformance.wire import SchemaError

HEADER = {"header": True, "engine": "vllm", "version": "0.33.0", "python": "3.11.7"}


VLLM = oracle("vllm")


@pytest.fixture(scope="module")
def grid():
    return scenarios("0.33.0")


def _stdout(*lines: object) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def _one_line_error(exc: pytest.ExceptionInfo[SchemaError]) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


def test_every_generated_scenario_and_answer_passes(grid):
    """The 430 payloads (308 of the grid, 122 Kimi-Linear) and hybridplan's own answers (plans and refusals) are
    what the schema describes."""
    answers = [sc.predicted for sc in grid]
    header, results = read_answer(VLLM, _stdout(HEADER, *answers))
    assert header["version"] == "0.33.0" and len(results) == len(grid) == 430
    assert sum("error" in r for r in results.values()) == 76
    for sc in grid:
        schema.scenario(json.loads(json.dumps(sc.payload)))


@pytest.mark.parametrize("mutate, field", [
    (lambda r: r["groups"][0].update(layers="16"), "groups[0].layers: expected int, got str"),
    (lambda r: r.pop("num_blocks"), "num_blocks: missing"),
    (lambda r: r.update(mamba_page_size_padded=1.5), "mamba_page_size_padded: expected int or null, got float"),
    (lambda r: r["groups"][1].update(kind="ssm"), "groups[1].kind: expected 'attention' or 'mamba', got str"),
    (lambda r: r.update(kv_cache_tokens=True), "kv_cache_tokens: expected int, got bool"),
    (lambda r: r.update(pages=3), "pages: not a field of Plan"),
])
def test_a_malformed_oracle_answer_is_refused_naming_the_field(grid, mutate, field):
    sc = next(sc for sc in grid if "error" not in sc.predicted)
    answer = copy.deepcopy(dict(sc.predicted))
    mutate(answer)
    with pytest.raises(SchemaError) as exc:
        read_answer(VLLM, _stdout(HEADER, answer))
    assert _one_line_error(exc) == f"vLLM oracle result {sc.id!r}: {field}"


def test_a_malformed_header_or_refusal_is_refused_and_no_engine_says_why(grid):
    with pytest.raises(SchemaError) as exc:
        read_answer(VLLM, _stdout({**HEADER, "engine": "sglang"}))
    assert _one_line_error(exc) == "vLLM oracle header: engine: expected 'vllm' or null, got str"
    refusal = next(sc.predicted for sc in grid if "error" in sc.predicted)
    with pytest.raises(SchemaError) as exc:
        read_answer(VLLM, _stdout(HEADER, {**refusal, "error": {"type": "ValueError"}}))
    assert _one_line_error(exc).endswith("error.message: missing")
    with pytest.raises(NoEngine, match="no usable vllm in .*: ModuleNotFoundError: No module named 'vllm'"):
        read_answer(VLLM, _stdout({"header": True, "engine": None, "error": "ModuleNotFoundError: No module named 'vllm'"}))


def test_the_driver_refuses_a_malformed_scenario_before_it_reaches_vllm(grid):
    """The driver checks each line on the way in: a scenario whose tp is a string is answered with a SchemaError
    refusal naming the field, without importing vLLM."""
    from hybridplan.conformance.vllm import driver

    payload = copy.deepcopy(dict(grid[0].payload))
    payload["tp"] = "2"
    out = driver.answer(json.dumps(payload))
    assert out == {"id": payload["id"], "error": {"type": "SchemaError",
                                                  "message": "vLLM oracle scenario: tp: expected int, got str"}}
    assert driver.answer("{not json")["error"]["type"] == "JSONDecodeError"


def test_the_parser_driver_answers_are_checked_as_the_planning_drivers_are():
    """vllm/parse_schema.py: a parse, a refusal and the flag records pass; a malformed one is refused naming the field,
    and every request hybridplan sends is one the parser driver reads."""
    from hybridplan.conformance.vllm import parse_schema
    from hybridplan.conformance.vllm.parser import cases

    parser = oracle("vllm-parser")
    flags = {"id": "flags", "allow_abbrev": True, "flags": [{"dest": "seed", "options": ["--seed"]}]}
    header, answers = read_answer(parser, _stdout(HEADER, {"id": "a", "parsed": {"seed": 7}},
                                                  {"id": "b", "error": {"type": "argparse", "message": "no"}}, flags))
    assert header["version"] == "0.33.0" and answers["flags"] == flags and answers["b"]["error"]["type"] == "argparse"
    with pytest.raises(SchemaError) as exc:
        read_answer(parser, _stdout(HEADER, {"id": "b", "error": "unrecognized arguments: --x"}))
    assert _one_line_error(exc) == "vLLM parser result 'b': error: expected an object (ParseError), got str"
    with pytest.raises(SchemaError) as exc:
        read_answer(parser, _stdout(HEADER, {**flags, "allow_abbrev": "yes"}))
    assert _one_line_error(exc).endswith("allow_abbrev: expected bool, got str")
    for case in cases("0.33.0", Path(".")):
        parse_schema.request(case.payload)
    with pytest.raises(SchemaError) as exc:
        parse_schema.request({"id": "a", "argv": "--seed 7"})
    assert _one_line_error(exc) == "vLLM parser request: argv: expected a list, got str"
