"""Import -> export -> Node evaluation on a docs checkout: per config module, is the import exact and does the
exported module behave like the original on every selection that has a cell?

    python benchmarks/docs_roundtrip.py --docs ~/src/sglang [--origin sgl-project/sglang@00ac710] \
        [--docs DIR2 --origin REPO@COMMIT2 ...] [--pages Qwen/qwen3.8-27b.jsx ...] [--json] [--report docs/roundtrip.md]

Each --docs tree may be a partial checkout (just docs/src/snippets/configs/...); --origin names where it came from,
in the same order. Without --docs it runs on the test pages written in the docs' shape (tests/cookbook/docs_pages).
--report replaces only what lies between the report's `docs_roundtrip: begin/end` markers (the prose stays).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from hybridplan.cookbook.docs_export import export_jsx
from hybridplan.cookbook.docs_import import import_evaluation
from hybridplan.cookbook.docs_rules import docs_rules
from hybridplan.cookbook.docs_view import DocsPage
from hybridplan.cookbook.node_eval import evaluate_file, evaluate_source
from hybridplan.errors import BadInput

HYBRID = ("Qwen/qwen3.8-27b.jsx", "Qwen/qwen3-next-80b-a3b-instruct.jsx", "Qwen/qwen3.6.jsx",
          "Qwen/qwen3.8-flash-next.jsx", "nvidia/nemotron-3.5-lightning.jsx", "moonshotai/kimi-k3.jsx")


def one(path: Path, origin: str = "") -> dict:
    t = time.perf_counter()
    try:
        ev = evaluate_file(path)
    except BadInput as exc:
        return {"page": str(path), "origin": origin, "status": "unreadable", "why": exc.message}
    imp = import_evaluation(ev)
    row = {"page": str(path), "origin": origin, "node": ev.node, "selections": ev.selections, "compared": imp.compared,
           "import_exact": imp.exact, "ratio_divergences": imp.ratio_divergences, "findings": imp.findings[:5],
           "docs_rules": docs_rules(ev)}
    if imp.page is not None:
        back = evaluate_source(export_jsx(imp.page), f"{path.name} (exported)")
        want, got = DocsPage.of(ev).observations(), DocsPage.of(back).observations()
        row["round_trip_exact"] = want == got
        row["exported_docs_rules"] = docs_rules(back)
    row["status"] = "exact" if imp.exact and row.get("round_trip_exact") else "not exact"
    row["seconds"] = round(time.perf_counter() - t, 2)
    return row


BEGIN, END = "<!-- docs_roundtrip: begin -->", "<!-- docs_roundtrip: end -->"


def report(rows: list[dict]) -> str:
    """The rows as a Markdown table: page, repo@commit, selections compared, import and round trip exact."""
    nodes = sorted({r["node"] for r in rows if r.get("node")})
    out = [f"Result ({time.strftime('%Y-%m-%d')}, Node {', '.join(nodes) or '-'}):", "",
           "| page | from | selections (with a cell) | import exact | round trip exact | ratio divergences | status |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        page = r["page"][r["page"].find("configs/") + len("configs/"):] if "configs/" in r["page"] else r["page"]
        out.append(f"| {page} | {r['origin']} | {r.get('selections', '-')} ({r.get('compared', '-')}) | "
                   f"{r.get('import_exact', '-')} | {r.get('round_trip_exact', '-')} | "
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
    args = ap.parse_args()
    todo: list[tuple[Path, str]] = []
    for k, tree in enumerate(args.docs):
        root = tree / "docs" / "src" / "snippets" / "configs"
        origin = args.origin[k] if k < len(args.origin) else str(tree)
        todo += [(root / p, origin) for p in (args.pages or HYBRID) if (root / p).exists()]
    if not args.docs:
        todo = [(p, "tests") for p in sorted((Path(__file__).parent.parent / "tests" / "cookbook" /
                                                "docs_pages").glob("*.jsx"))]
    rows = [one(p, o) for p, o in todo]
    if args.report:
        write_report(args.report, report(rows))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(f"{r['status']:10} {r['page']}  {r.get('compared', 0)} selections  {r.get('seconds', '')} s")
            for f in r.get("findings", []) + r.get("docs_rules", []):
                print(f"    {f}")
    return 0 if all(r["status"] == "exact" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
