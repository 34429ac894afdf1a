"""Import -> export -> Node evaluation on a docs checkout: per config module, is the import exact, does the
exported module behave like the original on every selection that has a cell, is its whole config object the
original's (field by field, functions as their source, hybridplan's provenance key aside), and how many lines differ
once both are formatted as the docs tree formats files (prettier with the tree's settings: sgl-project/sglang has
no prettier config, so prettier's defaults) beyond comments and that key?

    python benchmarks/docs_roundtrip.py --docs ~/src/sglang [--origin sgl-project/sglang@00ac710] \
        [--docs DIR2 --origin REPO@COMMIT2 ...] [--pages Qwen/qwen3.8-27b.jsx ...] [--json] [--report docs/roundtrip.md]
        [--prettier /tmp/prettier/node_modules/.bin/prettier]

The export is read back through the page YAML (`cookbook import` writes it, `cookbook export` reads it). Without
--prettier the diff column is `-` (install prettier outside the repository: `npm install --prefix /tmp/prettier
prettier`).

Each --docs tree may be a partial checkout (just docs/src/snippets/configs/...); --origin names where it came from,
in the same order. Without --docs it runs on the test pages written in the docs' shape (tests/cookbook/docs_pages).
--report replaces only what lies between the report's `docs_roundtrip: begin/end` markers (the prose stays).
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hybridplan.cookbook.docs.export import export_jsx
from hybridplan.cookbook.docs.importer import import_evaluation
from hybridplan.cookbook.docs.keep import PRIVATE
from hybridplan.cookbook.docs.node_eval import evaluate_file, evaluate_source
from hybridplan.cookbook.docs.rules import docs_rules
from hybridplan.cookbook.docs.view import DocsPage
from hybridplan.cookbook.pages import read_page_text
from hybridplan.errors import BadInput

_COMMENT = re.compile(r"^\s*(//|/\*|\*)")


def data_differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Paths where two evaluated config objects differ (functions compared by source text)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in dict.fromkeys([*a, *b]) for d in data_differences(a.get(k), b.get(k), f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in data_differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [where or "config"]


def formatted(text: str, prettier: str) -> list[str]:
    """The module as prettier formats it (the docs tree's settings), comment lines and hybridplan's key left out."""
    out = subprocess.run([prettier, "--stdin-filepath", "config.jsx"], input=text, capture_output=True, text=True,
                         timeout=120, check=True).stdout.splitlines()
    lines, skip = [], False
    for line in out:
        if line.startswith(f"  {PRIVATE}: "):
            skip = not line.rstrip().endswith(("},", "}"))
            continue
        if skip:
            skip = not re.match(r"^  \}", line)
            continue
        if not _COMMENT.match(line):
            lines.append(line)
    return lines


def changed_lines(a: list[str], b: list[str]) -> int:
    return sum(1 for d in difflib.unified_diff(a, b, lineterm="", n=0)
               if d[:1] in "+-" and not d.startswith(("+++", "---")))

HYBRID = ("Qwen/qwen3.8-27b.jsx", "Qwen/qwen3-next-80b-a3b-instruct.jsx", "Qwen/qwen3.6.jsx",
          "Qwen/qwen3.8-flash-next.jsx", "nvidia/nemotron-3.5-lightning.jsx", "moonshotai/kimi-k3.jsx")


def one(path: Path, origin: str = "", prettier: str | None = None) -> dict[str, Any]:
    t = time.perf_counter()
    try:
        ev = evaluate_file(path)
        imp = import_evaluation(ev)
    except BadInput as exc:
        return {"page": str(path), "origin": origin, "status": "unreadable", "why": exc.message}
    row = {"page": str(path), "origin": origin, "node": ev.node, "selections": ev.selections, "compared": imp.compared,
           "import_exact": imp.exact, "ratio_divergences": imp.ratio_divergences, "findings": imp.findings[:5],
           "docs_rules": docs_rules(ev)}
    if imp.page is not None:
        page = read_page_text(imp.yaml(), f"{path.stem}.yaml").page  # through the page file, as a maintainer would
        assert page is not None
        text = export_jsx(page)
        back = evaluate_source(text, f"{path.name} (exported)")
        want, got = DocsPage.of(ev).observations(), DocsPage.of(back).observations()
        row["round_trip_exact"] = want == got
        row["exported_docs_rules"] = docs_rules(back)
        theirs = {k: v for k, v in ev.data.items() if k != PRIVATE}
        ours = {k: v for k, v in back.data.items() if k != PRIVATE}
        row["data_differences"] = data_differences(theirs, ours)[:10]
        row["carried"] = len(page.docs.carried) if page.docs else 0
        if prettier:
            row["changed_lines"] = changed_lines(formatted(ev.source, prettier), formatted(text, prettier))
    row["status"] = ("exact" if imp.exact and row.get("round_trip_exact") and not row.get("data_differences")
                     and not row.get("changed_lines") else "not exact")
    row["seconds"] = round(time.perf_counter() - t, 2)
    return row


BEGIN, END = "<!-- docs_roundtrip: begin -->", "<!-- docs_roundtrip: end -->"


def report(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table: page, repo@commit, selections compared, import and round trip exact."""
    nodes = sorted({r["node"] for r in rows if r.get("node")})
    out = [f"Result ({time.strftime('%Y-%m-%d')}, Node {', '.join(nodes) or '-'}):", "",
           "| page | from | selections (with a cell) | import exact | round trip exact | config object differences "
           "| changed lines (prettier) | carried opaquely | ratio divergences | status |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        page = r["page"][r["page"].find("configs/") + len("configs/"):] if "configs/" in r["page"] else r["page"]
        out.append(f"| {page} | {r['origin']} | {r.get('selections', '-')} ({r.get('compared', '-')}) | "
                   f"{r.get('import_exact', '-')} | {r.get('round_trip_exact', '-')} | "
                   f"{len(r['data_differences']) if 'data_differences' in r else '-'} | "
                   f"{r.get('changed_lines', '-')} | {r.get('carried', '-')} | "
                   f"{r.get('ratio_divergences', '-')} | {r['status']} |")
    return "\n".join(out) + "\n"


def write_report(path: Path, table: str) -> None:
    """Replace the generated part of a report (between the BEGIN/END markers), keeping the prose around it; a file
    without the markers is written whole."""
    text = path.read_text() if path.exists() else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        path.write_text(f"{head}{BEGIN}\n{table}{END}{rest.split(END, 1)[1]}")
    else:
        path.write_text(table)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=Path, action="append", default=[],
                    help="an sglang checkout (its docs/src/snippets/configs are read); repeatable")
    ap.add_argument("--origin", action="append", default=[], help="REPO@COMMIT of each --docs tree, in order")
    ap.add_argument("--report", type=Path, help="also write a Markdown report here")
    ap.add_argument("--pages", nargs="*", help="config modules under configs/ (default: the hybrid models' pages)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--prettier", help="a prettier binary, to count the changed lines of the formatted export")
    args = ap.parse_args()
    todo: list[tuple[Path, str]] = []
    for k, tree in enumerate(args.docs):
        root = tree / "docs" / "src" / "snippets" / "configs"
        origin = args.origin[k] if k < len(args.origin) else str(tree)
        todo += [(root / p, origin) for p in (args.pages or HYBRID) if (root / p).exists()]
    if not args.docs:
        todo = [(p, "tests") for p in sorted((Path(__file__).parent.parent / "tests" / "cookbook" /
                                                "docs_pages").glob("*.jsx"))]
    rows = [one(p, o, args.prettier) for p, o in todo]
    if args.report:
        write_report(args.report, report(rows))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(f"{r['status']:10} {r['page']}  {r.get('compared', 0)} selections  {r.get('seconds', '')} s")
            for f in ([r["why"]] if "why" in r else []) + r.get("findings", []) + r.get("docs_rules", []) + \
                    r.get("data_differences", []):
                print(f"    {f}")
    return 0 if all(r["status"] == "exact" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
