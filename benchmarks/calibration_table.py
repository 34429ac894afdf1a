"""Write docs/calibration.md: predicted vs logged for every public boot log the tests use, and the cookbook's measured
launches against the model's verdict, with the margin they leave.

Run: python benchmarks/calibration_table.py [--out docs/calibration.md] [--check]
`--check` exits 1 when the file on disk differs from what the data and the model give now (the tests run it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hybridplan.cookbook.pages import bundled_ids, load_page
from hybridplan.cookbook.record_checks import check, margin_interval
from hybridplan.engine.sglang.serving.constants import constants_for
from hybridplan.evidence import rule_text
from hybridplan.calibration.public_compare import Pair, compare_all

OUT = Path(__file__).resolve().parents[1] / "docs" / "calibration.md"


def _num(x, digits: int) -> str:
    if x is None:
        return "—"
    return f"{x:,.{digits}f}" if isinstance(x, float) else f"{x:,}"


def _pair(p: Pair, digits: int = 2, relative: bool = False) -> str:
    if p.predicted is None and p.logged is None:
        return "—"
    err = p.relative if relative else p.error
    tail = "" if err is None else (f" ({err:+.1%})" if relative else f" ({err:+.2f})")
    return f"{_num(p.predicted, digits)} / {_num(p.logged, digits)}{tail}"


def _link(url: str) -> str:
    return f"[link]({url})" if url.startswith("https://") else f"`{url}`"


def public_table() -> list[str]:
    rows = compare_all()
    cards = sorted({r.record.gpu for r in rows})
    out = [f"## Public boot logs ({len(rows)} logs, {len(cards)} cards)", "",
           "Each cell is *predicted / logged (error)*; GiB unless it is a count. P is the free memory before the "
           "weights (`Load weight begin`, or `Load weight end` avail + mem usage); capture is the largest `Capture ... "
           "graph end` mem usage. K and KV tokens are predicted twice: from the card and the model alone "
           "(`explain --gpu`), and from the log's own P and A (the engine rule alone). A dash: the log does not show "
           "it, or the model is not in the catalog. The model is sglang 0.5.23's: logs of other releases differ where "
           "the releases do. An in-checkpoint MTP head holds its own embedding and lm_head while the pools are sized "
           "(~2.4 GiB per rank at TP2 for Qwen3.8-27B); the community AutoRound INT4 rows are sized as that export "
           "(--quantization auto-round on the catalog geometry). The qwen3.8-27b page's DSPARK pools on "
           "build 1cf2b8c are sized by rules that build shares with 0.5.23 (build profile 1cf2b8c differs in the "
           "prefill chunk and graph defaults, not in the pool split).", "",
           "| log | card | sglang | model | visible | P | weights | capture | K | KV tokens | K (log's P, A) | "
           "KV (log's P, A) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        rec = r.record
        out.append(" | ".join([
            f"| {rec.id} {_link(rec.url)}", rec.gpu + (f" x{rec.tp}" if (rec.tp or 1) > 1 else ""),
            rec.sglang_version or "—", rec.model or "—", _pair(r.visible_gib), _pair(r.pre_load_gib),
            _pair(r.weights_gib), _pair(r.capture_gib), _pair(r.K, 0, True), _pair(r.kv_tokens, 0, True),
            _pair(r.engine_K, 0, True), _pair(r.engine_kv_tokens, 0, True)]) + " |")
    errors = {name: [abs(getattr(r, name).error) for r in rows if getattr(r, name).error is not None]
              for name in ("visible_gib", "pre_load_gib", "weights_gib", "capture_gib")}
    out += ["", "Largest absolute error where both sides are known: " + ", ".join(
        f"{name.replace('_gib', '')} {max(v):.2f} GiB over {len(v)} log(s)" if v else f"{name.replace('_gib', '')} "
        "no log" for name, v in errors.items()) + ".", ""]
    return out


def records_table() -> list[str]:
    margin = constants_for().margin_gib
    out = ["## Measured launches in the cookbook pages", "",
           "Every record of every bundled page against the model's verdict (planner.verdict): the phase it "
           "predicts, the slack the fraction leaves, and what capture and the first request need with the "
           f"{margin:.2f} GiB margin.", "",
           "| page | record | card | measured | predicted | slack | capture need | serve need | agrees |",
           "|---|---|---|---|---|---|---|---|---|"]
    checks = []
    for pid in bundled_ids():
        page = load_page(pid)
        gpus = {h.id: h.gpu for h in page.hardware}
        for rec in page.records:
            for c in check(rec, gpus[rec.hw], page.engine_version):
                checks.append(c)
                v = c.verdict
                measured = rec.outcome + (f" ({rec.phase})" if rec.phase else "")
                predicted = "—" if v is None else ("serves" if v.serves else f"fails ({v.phase})")
                out.append(f"| {pid} | {c.label} | {rec.hw} | {measured} | {predicted} | "
                           f"{_num(v.figure('slack_gib') if v else None, 2)} | {_num(v.figure('capture_need_gib') if v else None, 2)} "
                           f"| {_num(v.figure('serve_need_gib') if v else None, 2)} | {'yes' if c.agrees else '**no**'} |")
    lo, hi = margin_interval(checks, margin)
    out += ["", f"The runtime records allow a margin from {lo:.2f} to {hi:.2f} GiB (a launch that served bounds it "
            f"from above, one that ran out of memory at capture or on its first request from below); the planner "
            f"keeps {margin:.2f} GiB (data/planner_constants.yaml `margin_gib`).", ""]
    return out


def reports_table() -> list[str]:
    from hybridplan.calibration.launch_reports import check, load

    checks = [c for r in load("sglang") for c in check(r)]
    agree, unsafe = sum(c.agrees for c in checks), sum(c.unsafe for c in checks)
    out = ["## Public launch reports", "",
           "Commands people ran on their own cards, with the outcome they reported (`src/hybridplan/data/"
           "sglang_launch_reports.yaml`, one link each), against `explain --gpu` under the report's release: *agrees* when "
           "it serves or fails as reported, a failure in the same kind of phase (boot: weights or a pool; runtime: "
           "capture or the first request). A community checkpoint is sized as loaded: `--quantization auto-round` on "
           "the model's geometry is its AutoRound INT4 export, an MTP head holds its own embedding and lm_head while "
           "the pools are sized. Verdicts on these cards name the reports they rest on (`confidence.basis`). On a "
           "unified-memory card (GB10) a report whose host's out-of-memory guard acted names that host (its "
           "constants: `hosts` in `data/planner_constants.yaml`); the others ran on the stock host, which swaps the "
           "server's host growth out.", "",
           "| report | card | sglang | --mem-fraction-static | reported | predicted | agrees |",
           "|---|---|---|---|---|---|---|"]
    for c in checks:
        r = c.report
        words = r.command.split()
        mfs = c.label.split("@")[1] if "@" in c.label else next(
            (t for k, t in zip(words, words[1:]) if k == "--mem-fraction-static"), "—")
        reported = r.outcome + (f" ({r.phase})" if r.phase else "")
        out.append(f"| {c.label} {_link(r.url)} | {r.gpu}" + (f" x{r.gpu_count}" if r.gpu_count > 1 else "")
                   + (f" ({r.host} host)" if r.host else "")
                   + f" | {r.version} | {mfs} | {reported} | {c.predicted} | "
                   + ("yes" if c.agrees else "**no**") + " |")
    out += ["", f"{agree} of {len(checks)} launches agree; {unsafe} that failed are predicted to serve.", ""]
    return out


def fleet_table() -> list[str]:
    from hybridplan.calibration.fleet_launches import check, load

    checks = [check(x) for x in load()]
    out = ["## Public launches in fleet layouts", "",
           "Hybrids served beyond one plain TP server, in the layouts `hybridplan fleet` enumerates (attention DP, "
           "prefill/decode disaggregation, pipeline stages; `src/hybridplan/data/fleet_launches.yaml`, one link each), "
           "resolved by the modelled release: S (state slots a session on that server) and the KV bytes one rank "
           "holds a token, and where the public log prints a rank's pool, the model's number for it beside the "
           "logged one. The per-rank sizing of every fleet layout is also run through sglang's own code "
           "(tests/conformance/test_fleet_conformance.py).", "",
           "| launch | layout | model geometry | S | KV B/token/rank | logged | predicted | agrees |",
           "|---|---|---|---|---|---|---|---|"]
    for c in checks:
        x = c.launch
        logged = ", ".join(f"{k} {v:,}" for k, v in x.logged.items()) or "—"
        predicted = ", ".join(f"{k} {v:,}" for k, v in c.predicted.items()) or "—"
        agrees = "—" if c.agrees is None else "yes" if c.agrees else "**no**"
        out.append(f"| {x.id} {_link(x.url)} | {x.layout} | {x.model} | {c.slots_per_request} | "
                   f"{c.kv_bytes_per_token:,} | {logged} | {predicted} | {agrees} |")
    out.append("")
    return out


def render() -> str:
    head = ["# Calibration: predictions against real cards", "",
            "Generated by `python benchmarks/calibration_table.py` from `src/hybridplan/data/boot_logs.yaml` (public "
            "boot logs, one link each), the bundled cookbook pages' `records`, the public launch reports and the "
            "public launches in fleet layouts; do not edit by hand.", ""]
    return "\n".join(head + public_table() + records_table() + reports_table() + fleet_table() + rule_text())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    a = ap.parse_args()
    text = render()
    if a.check:
        same = a.out.is_file() and a.out.read_text() == text
        print("up to date" if same else f"{a.out} is stale: run python benchmarks/calibration_table.py")
        return 0 if same else 1
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(text)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
