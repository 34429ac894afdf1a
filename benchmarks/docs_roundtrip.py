"""Import -> export -> Node evaluation on a docs checkout: per config module, is the import exact and does the
exported module behave like the original on every selection that has a cell?

    python benchmarks/docs_roundtrip.py --docs ~/src/sglang [--pages Qwen/qwen3.8-27b.jsx ...] [--json]

Without --docs it runs on the test pages written in the docs' shape (tests/cookbook/docs_pages).
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


def one(path: Path) -> dict:
    t = time.perf_counter()
    try:
        ev = evaluate_file(path)
    except BadInput as exc:
        return {"page": str(path), "status": "unreadable", "why": exc.message}
    imp = import_evaluation(ev)
    row = {"page": str(path), "selections": ev.selections, "compared": imp.compared, "import_exact": imp.exact,
           "findings": imp.findings[:5], "docs_rules": docs_rules(ev)}
    if imp.page is not None:
        back = evaluate_source(export_jsx(imp.page), f"{path.name} (exported)")
        want, got = DocsPage.of(ev).observations(), DocsPage.of(back).observations()
        row["round_trip_exact"] = want == got
        row["exported_docs_rules"] = docs_rules(back)
    row["status"] = "exact" if imp.exact and row.get("round_trip_exact") else "not exact"
    row["seconds"] = round(time.perf_counter() - t, 2)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=Path, help="an sglang checkout (its docs/src/snippets/configs are read)")
    ap.add_argument("--pages", nargs="*", help="config modules under configs/ (default: the hybrid models' pages)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.docs:
        root = args.docs / "docs" / "src" / "snippets" / "configs"
        paths = [root / p for p in (args.pages or HYBRID) if (root / p).exists()]
    else:
        paths = sorted((Path(__file__).parent.parent / "tests" / "cookbook" / "docs_pages").glob("*.jsx"))
    rows = [one(p) for p in paths]
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
