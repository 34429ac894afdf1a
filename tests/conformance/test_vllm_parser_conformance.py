"""Each modelled vLLM release's own `vllm serve` parser and hybridplan's read the same argv alike, as recorded
(conformance/recorded/vllm-parser-<version>.json.gz, scripts/record_oracles.py): the values that differ from the
defaults, or the refusal and argparse's message (conformance/vllm/parser.py's spellings: boolean forms, underscores,
-O levels, dotted keys, human-readable integers, `auto`, repeats, abbreviations). And the registry hybridplan rewinds
for the release (engine/vllm/flags.json through flag_history.json) is the release's own parser, flag by flag: every
parsing field, the hidden and negating option strings included (help text aside)."""

from __future__ import annotations

import pytest
from oracle_setup import RECORDED

from hybridplan.conformance.oracle import oracle
from hybridplan.conformance.recorded import replay

PARSER = oracle("vllm-parser")


@pytest.mark.parametrize("version", PARSER.releases)
def test_every_spelling_and_flag_reads_as_the_release_reads_it(version, tmp_path):
    report = replay(PARSER, version, RECORDED, tmp_path)
    outcomes = report.counts["outcome"]
    refusals = sum(n for k, n in outcomes.items() if k.startswith("refused:"))
    print(f"\nvllm {report.engine['version']}: {len(report.cases) - 1} argv ({dict(outcomes)}) and the parser's flags, "
          f"{len(report.drifts)} differences")
    assert report.engine["version"] == version
    assert len(report.cases) >= 50 and refusals >= 5 and outcomes["flags"] == 1
    assert not report.drifts, "\n".join(report.drift_lines())
