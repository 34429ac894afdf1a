"""What a cold `hybridplan` imports, so start-up does not creep back up (checked on the import graph, not on time).

`python -m hybridplan <command>` registers only the command it runs (hybridplan.cli.COMMANDS); a JSON answer needs no
text renderer or rich, typer never builds its pydantic adapters (hybridplan.commands.coercion), and a bundled model
is not run through the config schema (package data, checked here once instead).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hybridplan.cli import COMMANDS

EXPLAIN = ["--", "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.5-27B"]
ON_5090 = ["--", "python", "-m", "sglang.launch_server", "--model-path", "RadixArk/Qwen3.8-27B-NVFP4", "--kv-cache-dtype",
           "fp8_e4m3", "--mem-fraction-static", "0.9"]
# never on a JSON answer: the text renderers and rich, typer's pydantic adapters, other commands' modules
NEVER = ("rich", "hybridplan.render", "typer._adapters", "torch", "sglang", "transformers", "fastapi", "numpy",
         "huggingface_hub", *(module for _, module in COMMANDS))
# a verdict on a card reads the measured launches on it (hybridplan.calibration.sources), never the cookbook's renderer,
# matrix, checker or exporters (hybridplan.cookbook imports nothing eagerly) ...
VERDICT_NEVER = ("hybridplan.cookbook.render", "hybridplan.cookbook.matrix", "hybridplan.cookbook.selection",
                 "hybridplan.cookbook.validate", "hybridplan.cookbook.export")
# ... nor the page model, the boot-log or the report parsers: every measured launch ships in one table
# (hybridplan.evidence_table)
PAGE_MODEL = ("pydantic", "hybridplan.cookbook.pages", "hybridplan.cookbook.schema", "hybridplan.cookbook.records",
              "hybridplan.cookbook.record_checks", "hybridplan.cookbook.conditions", "hybridplan.calibration.public_logs",
              "hybridplan.calibration.launch_reports", "yaml")  # the shipped YAML tables: their JSON snapshot
PROBE = """
import json, sys
sys.argv = ["hybridplan", *json.loads(sys.argv[1])]
from hybridplan.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
sys.stderr.write("\\nMODULES " + json.dumps([code, sorted(sys.modules)]))
"""


def _run(argv: list[str]) -> tuple[int, set[str]]:
    """Exit code and every module imported by `hybridplan <argv>` in a fresh interpreter (the real entry point)."""
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv)], capture_output=True, text=True, timeout=120)
    code, modules = json.loads(proc.stderr.rsplit("\nMODULES ", 1)[1])
    return code, set(modules)


def _hits(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


@pytest.mark.parametrize("argv,own,also_never", [
    (["explain", "--json", "--pool-budget-gib", "66.5", *EXPLAIN], "hybridplan.commands.explain",
     ("pydantic", "hybridplan.models.config_schema", "hybridplan.hardware.catalog", "hybridplan.planner")),
    (["explain", "--json", "--gpu", "h200", *EXPLAIN], "hybridplan.commands.explain",
     ("hybridplan.models.config_schema", *VERDICT_NEVER, *PAGE_MODEL)),
    (["explain", "--json", "--gpu", "rtx5090", *ON_5090], "hybridplan.commands.explain",
     ("hybridplan.models.config_schema", *VERDICT_NEVER, *PAGE_MODEL)),
    (["ratio", "--json", "-L", "8192", "-C", "8", *EXPLAIN], "hybridplan.commands.ratio",
     ("pydantic", "hybridplan.models.config_schema")),
    (["models", "--json"], "hybridplan.commands.models", ("pydantic",)),
    # plan bounds itself below the launches the pages measured failing from the same table (record_evidence)
    (["plan", "--json", "--gpu", "h200", "-L", "32768", "-C", "8", *EXPLAIN], "hybridplan.commands.plan",
     ("hybridplan.models.config_schema", *VERDICT_NEVER, *PAGE_MODEL)),
    (["compare", "--json", "--model", "Qwen/Qwen3.5-27B", "--gpu", "h200", "-L", "32768"], "hybridplan.commands.compare",
     ("hybridplan.models.config_schema", *VERDICT_NEVER, *PAGE_MODEL)),
])
def test_a_json_answer_imports_only_what_it_needs(argv, own, also_never):
    code, modules = _run(argv)
    assert code == 0
    assert own in modules
    assert _hits(modules, tuple(m for m in (*NEVER, *also_never) if m != own)) == []


def test_a_card_with_page_evidence_reads_the_table_not_the_page():
    """The boundary is not vacuous: qwen3.8-27b records launches on an RTX 5090 and measures its H200 cells, so both
    verdicts read the pages' evidence, from the shipped table and without the page model."""
    for argv in (["explain", "--json", "--gpu", "rtx5090", *ON_5090], ["explain", "--json", "--gpu", "h200", *EXPLAIN]):
        code, modules = _run(argv)
        assert code == 0 and "hybridplan.evidence_table" in modules and not set(PAGE_MODEL) & modules


def test_text_output_still_renders():
    """The boundary is not vacuous: without --json the same command imports its renderer and rich."""
    code, modules = _run(["explain", "--pool-budget-gib", "66.5", *EXPLAIN])
    assert code == 0 and {"hybridplan.render.explain", "rich.console"} <= modules


def test_every_command_module_registers_the_name_the_registry_gives():
    probe = ("import json; from importlib import import_module; from hybridplan.cli import COMMANDS\n"
             "from hybridplan.commands.app import app\n"
             "def names():\n"
             "    return [c.name or c.callback.__name__.replace('_', '-') for c in app.registered_commands] + "
             "[g.name or g.typer_instance.info.name for g in app.registered_groups]\n"
             "out = []\n"
             "for _, module in COMMANDS:\n"
             "    before = names(); import_module(module); out.append([n for n in names() if n not in before])\n"
             "print(json.dumps(out))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [[name] for name, _ in COMMANDS]


def test_help_and_unknown_commands_see_every_command():
    help_text = subprocess.run([sys.executable, "-m", "hybridplan", "--help"], capture_output=True, text=True,
                               timeout=120, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"}).stdout
    assert all(f" {name} " in help_text for name, _ in COMMANDS), help_text
    proc = subprocess.run([sys.executable, "-m", "hybridplan", "explian"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Did you mean 'explain', 'plan'?" in proc.stderr, proc.stderr


def test_every_bundled_config_passes_the_schema():
    """The CLI does not run a bundled entry's config through the schema (hybridplan.models.loader); this does."""
    from hybridplan.models.catalog import catalog
    from hybridplan.models.config_schema import check_config
    from hybridplan.models.loader import catalog_source

    for hf_id in catalog():
        src = catalog_source(hf_id, hf_id)
        check_config(src.config, src.origin)
