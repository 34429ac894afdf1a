"""`results export`: stored runs as the cookbook's measurement records, written into the page file (or a patch).

Each run becomes one `measurements` entry of the cell its selection matches, with `covers` naming the overlay
picks (and the match picks a multi-valued cell needs) it was measured with. The page text is edited in place at
the YAML node positions, so comments and layout survive; the result is re-read with the cookbook's own loader.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from hybridplan.errors import BadInput
from hybridplan.verify.bench import summary
from hybridplan.verify.store import OUTCOMES, Run

if TYPE_CHECKING:
    from hybridplan.cookbook.schema import Page


def measurement(run: Run, page: Page) -> tuple[int, dict[str, Any]]:
    """The cell index and one cookbook Measurement (schema.Measurement fields) for a stored run."""
    from hybridplan.cookbook.selection import find_cell

    ref = find_cell(page, run.key.selection)
    if ref is None:
        raise BadInput(f"run {run.id}: page {page.id} has no cell for {run.key.selection}")
    covered = {d.id: run.key.selection[d.id] for d in page.overlay_dims if d.id in run.key.selection}
    for dim, value in ref.cell.match.items():
        if isinstance(value, list):
            covered[dim] = run.key.selection[dim]
    w = run.key.workload
    bench = summary(run.bench)
    boot = run.boot
    record = {
        "date": run.created_at[:10],
        "build": run.key.engine_commit or run.key.engine_version,
        "protocol": f"hybridplan verify, {w.get('num_prompts')} prompts: {_protocol(run.bench_command)}",
        "workload": {"isl": w["isl"], "osl": w["osl"], "concurrency": w["concurrency"]},
        "covers": {"equals": covered} if covered else True,
        "outcome": run.outcome if run.outcome in OUTCOMES else "degraded",
    }
    for field, key in (("max_total_num_tokens", "max_total_num_tokens"),
                       ("max_mamba_cache_size", "max_mamba_cache_size"),
                       ("max_running_requests", "max_running_requests")):
        if boot.get(key) is not None:
            record[field] = boot[key]
    for field in ("tpot_ms", "accept_length"):
        if bench.get(field) is not None:
            record[field] = bench[field]
    record["source"] = f"hybridplan results run {run.id} ({run.key.gpu}, sglang {run.key.engine_version})"
    notes = [f"swept {run.sweep}"] if run.sweep else []
    if run.failure:
        notes.append(f"{run.failure['phase']}: {run.failure['message'][:200]}")
    if notes:
        record["note"] = "; ".join(notes)
    return ref.index, record


def _protocol(bench_command: str | None) -> str:
    """The benchmark command without the wrapper and the endpoint (what a reader reruns)."""
    if not bench_command:
        return "boot only (the server did not come up)"
    tail = bench_command[bench_command.find("-m sglang."):] if "-m sglang." in bench_command else bench_command
    out, skip = [], False
    for tok in tail.split():
        if skip:
            skip = False
            continue
        if tok in ("--host", "--port"):
            skip = True
            continue
        out.append(tok)
    return "python " + " ".join(out)


# ------------------------------------------------------------------------------------------------ text edit


def _key_node(mapping: yaml.MappingNode, key: str) -> tuple[yaml.Node, yaml.Node] | tuple[None, None]:
    for k, v in mapping.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return k, v
    return None, None


def _end_line(node: yaml.Node, lines: list[str]) -> int:
    """The line after a block node (0-based): the first later line indented less than the node (a sequence also
    ends at a line at its own column that is not an item), trailing blank and comment lines left outside."""
    first = node.start_mark.line
    column = node.start_mark.column
    is_seq = isinstance(node, yaml.SequenceNode)  # a block sequence starts at its first dash
    end = len(lines)
    for i in range(first + 1, len(lines)):
        text = lines[i]
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        indent = len(text) - len(text.lstrip())
        if indent < column or (is_seq and indent == column and not text.lstrip().startswith("-")):
            end = i
            break
    while end - 1 > first and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def _dump_items(records: list[dict[str, Any]], indent: int) -> list[str]:
    text = yaml.safe_dump(records, sort_keys=False, default_flow_style=None, width=110, allow_unicode=True)
    return [(" " * indent + line) if line else line for line in text.splitlines()]


def insert_measurements(text: str, by_cell: dict[int, list[dict[str, Any]]]) -> str:
    """The page text with each cell's new records appended to its `verification.measurements` list."""
    root = yaml.compose(text)
    _, cells = _key_node(root, "cells") if isinstance(root, yaml.MappingNode) else (None, None)
    if not isinstance(cells, yaml.SequenceNode):
        raise BadInput("the page has no `cells` list")
    lines = text.splitlines()
    edits: list[tuple[int, int, list[str]]] = []  # (line, lines replaced, new lines)
    for index, records in by_cell.items():
        cell = cells.value[index]
        if not isinstance(cell, yaml.MappingNode) or cell.flow_style:
            raise BadInput(f"cell {index} is not a block mapping; add its measurements by hand")
        cell_indent = cell.start_mark.column
        vkey, verification = _key_node(cell, "verification")
        if verification is None:
            edits.append((_end_line(cell, lines), 0, [" " * cell_indent + "verification:",
                                               " " * (cell_indent + 2) + "measurements:"]
                          + _dump_items(records, cell_indent + 4)))
            continue
        if not isinstance(verification, yaml.MappingNode) or verification.flow_style:
            raise BadInput(f"cell {index}: `verification` is not a block mapping; add its measurements by hand")
        mkey, items = _key_node(verification, "measurements")
        if mkey is None or items is None:
            indent = verification.start_mark.column
            edits.append((_end_line(verification, lines), 0,
                          [" " * indent + "measurements:"] + _dump_items(records, indent + 2)))
        elif isinstance(items, yaml.SequenceNode) and not items.flow_style and items.value:
            edits.append((_end_line(items, lines), 0, _dump_items(records, items.start_mark.column)))
        else:  # `measurements: []` or a flow list: rewrite the key's line as a block list
            indent = mkey.start_mark.column
            existing = yaml.safe_load(yaml.serialize(items)) or []
            start = mkey.start_mark.line
            edits.append((start, _end_line(items, lines) - start,
                          [" " * indent + "measurements:"] + _dump_items(existing + records, indent + 2)))
    for at, drop, new in sorted(edits, key=lambda e: e[0], reverse=True):  # bottom-up keeps line numbers valid
        lines[at:at + drop] = new
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


def export_runs(page_path: Path, runs: list[Run], page: Page) -> tuple[str, str, int]:
    """(old text, new text, records) for the page file with the runs' measurement records added; the new text is
    re-read with the cookbook loader and must still be a valid page."""
    from hybridplan.cookbook.pages import read_page_text

    try:
        old = page_path.read_text()
    except OSError as exc:
        raise BadInput(f"cannot read {page_path}: {exc.strerror or exc}") from None
    by_cell: dict[int, list[dict[str, Any]]] = {}
    for run in runs:
        index, record = measurement(run, page)
        by_cell.setdefault(index, []).append(record)
    new = insert_measurements(old, by_cell)
    loaded = read_page_text(new, str(page_path))
    if loaded.page is None:
        e = loaded.errors[0]
        raise BadInput(f"the exported page would not load ({e.line}: {e.message}); nothing was written")
    return old, new, sum(len(v) for v in by_cell.values())


def unified_patch(old: str, new: str, path: Path) -> str:
    """A patch `git apply` takes from the current directory (paths relative to it where they can be)."""
    rel = os.path.relpath(path)
    name = rel if not rel.startswith("..") else str(path).lstrip("/")
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))
