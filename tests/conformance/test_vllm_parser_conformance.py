"""Each modelled vLLM release's own `vllm serve` parser and hybridplan's read the same argv alike: the values that
differ from the defaults, or the refusal and argparse's message (conformance/vllm_parser.py's spellings: boolean
forms, underscores, -O levels, dotted keys, human-readable integers, `auto`, repeats, abbreviations)."""

from __future__ import annotations

from pathlib import Path

import pytest
from oracle_setup import run_setup

from hybridplan.conformance import vllm_parser as vp
from hybridplan.engine.vllm.engine import SUPPORTED

pytestmark = pytest.mark.conformance


@pytest.mark.parametrize("version", SUPPORTED)
def test_every_spelling_reads_as_the_release_reads_it(oracle_python, version):
    venv = Path(oracle_python).absolute().parent.parent
    python, pythonpath = run_setup("setup_vllm_oracle.sh", str(venv), version,
                                   failure="the vLLM oracle could not be set up").split()
    cases = vp.argvs()
    header, answers = vp.run_oracle(python, pythonpath, cases)
    differences = vp.compare(version, cases, answers)
    refusals = sum("error" in a for a in answers)
    print(f"\nvllm {header['version']}: {len(cases)} argv, {refusals} refused by the release, "
          f"{len(differences)} differences")
    assert header["version"] == version
    assert len(cases) >= 50 and refusals >= 5
    lines = [f"{d.argv[1:]}: vLLM {d.engine} != hybridplan {d.hybridplan}" for d in differences]
    assert not lines, "\n".join(lines)
