"""`guard`: the decision in a few plain lines on stderr (stdout is the engine's once it runs), from
`Preflight.as_dict()`: the verdict and its phase, what it rests on, the fix, and what runs."""

from __future__ import annotations

import sys
from typing import Any


def _fix_lines(d: dict[str, Any]) -> list[str]:
    fix = d["fix"]
    if fix is None:
        return [f"  {note}" for note in d["notes"]]
    target = f"{fix['concurrency']:,} x {fix['request_length']:,}-token requests"
    if not fix["fits"]:
        out = [f"  no fix for {target}: {fix['why'] or 'no launch the planner tries serves it'}"]
        if fix["cheapest_change"]:
            out.append(f"  cheapest change: {fix['cheapest_change']} (--request-length / --concurrency plan for "
                       "another workload)")
        return out + [f"  {note}" for note in d["notes"]]
    out = [f"  fix (the planner's fewest changes for {target}):"]
    out += [f"    {before or '(not set)'} -> {after or '(dropped)'}" for before, after in d["changes"]]
    out.append(f"    {fix['command']}")
    return out + [f"  {note}" for note in d["notes"]]


def show_guard(d: dict[str, Any], runs: bool, on_unknown: str, fix_asked: bool) -> None:
    """The decision; `runs`: the launch in d["launch"] (or, unknown, the given one) runs next; `fix_asked`: --fix."""
    where = f"on {d['card']} ({d['engine']} {d['engine_version']})"
    v = d["verdict"]
    lines: list[str] = []
    if d["outcome"] == "unknown":
        lines.append(f"guard: no verdict {where}: {d['reason']}")
        lines.append(f"guard: --on-unknown {on_unknown}: " + (f"exec {d['command']}" if runs else
                     "refused (--on-unknown exec runs what the guard cannot judge)"))
    elif v["serves"] and not d["fixed"]:
        lines.append(f"guard: serves {where}: {v['message']}" + (f" [confidence: {v['confidence']}]"
                                                                  if v["confidence"] else ""))
        lines.append(f"guard: exec {d['launch']}")
    else:
        lines.append(f"guard: fails {where} in phase {v['phase']}: {v['message']}")
        if v["rule"]:
            lines.append(f"  rule: {v['rule']}")
        if v["confidence"]:
            lines.append(f"  evidence: {v['confidence']}" + (f" - {v['evidence']}" if v["evidence"] else ""))
        lines += _fix_lines(d)
        if d["fixed"]:
            lines.append(f"guard: --fix: the planned launch serves: {d['fix_verdict']['message']}")
            lines.append(f"guard: exec {d['launch']}")
        else:
            lines.append("guard: refused: the engine is not started" + (
                " (--fix runs the planned launch)" if not fix_asked and d["fix"] and d["fix"]["fits"] else ""))
    print("\n".join(lines), file=sys.stderr, flush=True)
