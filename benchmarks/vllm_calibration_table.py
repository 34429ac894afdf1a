"""Write docs/vllm-calibration.md: public vLLM boot logs of hybrid models, predicted vs logged tokens and concurrency
from the logged available KV memory, with hybridplan's vLLM model of the log's release (benchmarks/vllm_boot_logs.yaml),
and the public launches with their outcome (served, refused at which check, out of memory in which phase) with every
number vLLM printed for them against the model's (src/hybridplan/data/vllm_launch_reports.yaml).

A logged `Available KV cache memory: X GiB` is X rounded to 0.01 GiB, so the prediction is every capacity vLLM could
log for a pool in [X - 0.005, X + 0.005) GiB; a row reproduces when the logged tokens are one of them (and the
concurrency prints the same). Run: python benchmarks/vllm_calibration_table.py [--out docs/vllm-calibration.md]
[--check]   (`--check` exits 1 when the file on disk differs from what the data and the model give now).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hybridplan.calibration.launch_reports import Report, load as load_reports
from hybridplan.engine.vllm.serving import logcheck as vllm_check
from hybridplan.engine.vllm.serving.logcheck import Prediction

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "vllm_boot_logs.yaml"
OUT = ROOT / "docs" / "vllm-calibration.md"
REPORTS = "vllm"  # the engine whose launch reports these are
# what vLLM prints that the model does not compute (shown, not held to a prediction)
SHOWN = ("weights_gib", "free_gib", "total_gib")
_KV_REFUSAL = re.compile(r"\(([0-9.]+) GiB KV cache is needed.*estimated maximum model length is (\d+)")


@dataclass(frozen=True)
class CardAlone:
    """The available KV memory and the capacity vLLM would log, estimated from the card alone (no boot log)."""

    available_gib: float
    tokens: int
    concurrency: float

    def error_gib(self, logged_gib: float) -> float:
        return round(self.available_gib - logged_gib, 2)


@dataclass(frozen=True)
class Row:
    log: dict[str, Any]
    prediction: Prediction
    card: CardAlone | None  # None where the log carries `no_card_estimate` (why there is none)

    @property
    def reproduced(self) -> bool:
        p = self.prediction
        return self.log["kv_cache_tokens"] in p.tokens and f"{self.log['max_concurrency']:.2f}" in p.concurrency


def predict(log: dict[str, Any]) -> Row:
    """The capacities the modelled release logs for the record's launch, card and rounded available KV memory."""
    return Row(log, vllm_check.predict(log["command"], log["available_kv_gib"], log["gpu"], log["model_release"]),
               card_alone(log))


def card_alone(log: dict[str, Any]) -> CardAlone | None:
    """explain --engine vllm --gpu G without the logged memory: the memory timeline of engine/vllm/serving/memory.py. None
    for a log marked `no_card_estimate` (a checkpoint the catalog does not price, a shared card, or an estimate that
    vLLM's admission check would refuse where the boot went through; the field says which)."""
    from hybridplan.engine.vllm.serving.explain import explain_vllm

    if log.get("no_card_estimate"):
        return None
    d = explain_vllm(log["command"], version=log["model_release"], kv_memory_gib=None, gpu=log["gpu"])
    return CardAlone(available_gib=d["available_kv_memory_bytes"] / 2**30, tokens=d["kv_cache_tokens"],
                     concurrency=d["max_concurrency"])


def rows() -> list[Row]:
    return [predict(log) for log in yaml.safe_load(DATA.read_text())["logs"]]


@dataclass(frozen=True)
class Launch:
    """One public launch against `explain --engine vllm`: the verdict (serves, or the phase it stops at with vLLM's
    message) and every number vLLM printed beside the model's (each value the model allows where the logged GiB is
    rounded)."""

    report: Report
    model: dict[str, tuple[str, ...]]  # LOGGED figure -> the values the model gives, formatted as vLLM prints them
    verdict: dict[str, Any]  # the payload's "verdict"

    @property
    def called(self) -> str:
        v = self.verdict
        return "serves" if v["serves"] else f"fails ({v['phase']})"

    @property
    def agrees(self) -> bool:
        """Serves as reported, or fails at the reported phase."""
        r, v = self.report, self.verdict
        return bool(v["serves"]) if r.outcome == "served" else (not v["serves"] and v["phase"] == r.phase)

    @property
    def unsafe(self) -> bool:
        """A launch that failed, predicted to serve."""
        return self.report.outcome == "failed" and bool(self.verdict["serves"])

    def status(self, figure: str) -> str:
        """reproduced, shown (vLLM prints it, the model does not compute it), the input (the logged memory the model
        plans from), or differs with the report's reason."""
        if figure in SHOWN:
            return "shown"
        if figure == "available_kv_gib" and "available_kv_gib" not in self.model:
            return "the input"
        if _fmt(figure, self.report.logged[figure]) in self.model.get(figure, ()):
            return "reproduced"
        return "differs: " + self.report.differs.get(figure, "reason not identified")

    @property
    def unexplained(self) -> list[str]:
        """What the report states that the model misses with no reason given (the test holds this empty): a logged
        figure, or the outcome and phase."""
        out = [f for f in self.report.logged if self.status(f) == "differs: reason not identified"]
        if not self.agrees and not {"outcome", "phase"} & set(self.report.differs):
            out.append("outcome" if self.unsafe or self.report.outcome == "served" else "phase")
        return out

    @property
    def stale(self) -> list[str]:
        """Reasons the report gives for a miss the model no longer makes (the test holds this empty too)."""
        out = [f for f in self.report.differs if f in self.report.logged and self.status(f) == "reproduced"]
        if "outcome" in self.report.differs and self.verdict["serves"] == (self.report.outcome == "served"):
            out.append("outcome")
        if "phase" in self.report.differs and self.agrees:
            out.append("phase")
        return out


def _fmt(figure: str, value: float) -> str:
    """A figure as vLLM prints it (GiB and concurrency to 0.01, counts whole)."""
    return f"{value:.2f}" if figure.endswith("_gib") or figure == "max_concurrency" else f"{int(value):d}"


def launch(r: Report) -> Launch:
    """The verdict on a reported launch and the model's numbers: from the logged available KV memory where the log
    prints it (every plan a pool in [X - 0.005, X + 0.005) GiB allows), else from the card alone."""
    from hybridplan.engine.vllm.serving.explain import explain_vllm

    gib = r.logged.get("available_kv_gib")
    centre = explain_vllm(r.command, version=r.version, kv_memory_gib=gib, gpu=r.gpu)
    v = centre["verdict"]
    model: dict[str, tuple[str, ...]] = {"max_num_seqs": (str(v["max_num_seqs"]),)}
    if "total_gib" in r.logged:  # v1/worker/utils.py::request_memory: ceil(total x utilization), total to 0.01 GiB
        util = centre["resolved"]["gpu_memory_utilization"]
        model["requested_gib"] = tuple(dict.fromkeys(
            f"{math.ceil(t * 2**30 * util) / 2**30:.2f}" for t in (r.logged["total_gib"] - 0.005,
                                                                  r.logged["total_gib"] + 0.005 - 1e-9)))
    found = _KV_REFUSAL.search(v.get("message") or "")
    if found:
        model |= {"needed_kv_gib": (found.group(1),), "estimated_max_model_len": (found.group(2),)}
    if centre["num_blocks"] is None:
        return Launch(r, model, v)
    if gib is None:
        model |= {"num_blocks": (str(centre["num_blocks"]),),
                  "available_kv_gib": (f"{centre['available_kv_memory_bytes'] / 2**30:.2f}",),
                  "kv_cache_tokens": (str(centre["kv_cache_tokens"]),),
                  "max_concurrency": (f"{centre['max_concurrency']:.2f}",)}
        return Launch(r, model, v)
    edges = [explain_vllm(r.command, version=r.version, kv_memory_gib=g, gpu=r.gpu)["num_blocks"] or centre["num_blocks"]
             for g in (gib - 0.005, gib + 0.005 - 1e-9)]
    p = vllm_check.predict(r.command, gib, r.gpu, r.version)
    model |= {"num_blocks": tuple(str(n) for n in range(edges[0], edges[1] + 1)),
              "kv_cache_tokens": tuple(str(t) for t in p.tokens), "max_concurrency": p.concurrency}
    return Launch(r, model, v)


def launches() -> list[Launch]:
    return [launch(r) for r in load_reports(REPORTS)]


def _figures(figures: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in figures.items()) or "—"


def launch_table(table: list[Launch]) -> list[str]:
    new = [x for x in table if "benchmarks/vllm_boot_logs.yaml" not in x.report.note]
    lines = [
        "## Public launches and their outcome", "",
        f"Generated from `src/hybridplan/data/vllm_launch_reports.yaml`: {len(table)} public launches of hybrid models "
        f"({len(new)} not in the boot-log table above), each with the outcome its author reported (served; refused at "
        "which check; out of memory in which phase) and every number vLLM printed, beside the model's own for the "
        "same launch under the modelled release: from the logged `Available KV cache memory` where the log prints "
        "it, else from the card alone (engine/vllm/serving/memory.py). *Explain's verdict* is `explain --engine vllm "
        "--gpu G [--kv-memory-gib A] --engine-version V -- <launch>`'s `verdict` (serves, or the check it stops at "
        "with vLLM's message); *agrees* when it serves as reported or stops at the reported check. *Reproduced*: vLLM's number is one the model "
        "gives; *differs*: it is not, and the report says why as far as it is known; *shown*: vLLM prints it, the "
        "model does not compute it; *the input*: the logged memory the model plans from.", "",
        "| launch | release (as logged) | modelled as | card | command | reported | explain's verdict | vLLM printed | "
        "the model | result |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for x in table:
        r = x.report
        link = r.url.removeprefix("https://github.com/")
        reported = r.outcome + (f" ({r.phase})" if r.phase else "")
        if r.message:
            reported += f": {r.message}"
        printed = _figures({k: _fmt(k, v) for k, v in r.logged.items()})
        model = _figures({k: " / ".join(v) for k, v in x.model.items() if k in r.logged or k == "num_blocks"})
        called = x.called + (f": {x.verdict['message']}" if x.verdict.get("message") else "")
        called = f"**{called}** (fails: predicted to serve)" if x.unsafe else called
        verdicts = ("agrees" if x.agrees else "**disagrees**")
        figures = "; ".join(f"{f} {x.status(f)}" for f in r.logged)
        others = "; ".join(f"{k} differs: {v}" for k, v in r.differs.items() if k not in r.logged)
        result = "; ".join(t for t in (verdicts, figures, others) if t)
        card = r.gpu + (f" x{r.gpu_count}" if r.gpu_count > 1 else "")
        lines.append(f"| [{link}]({r.url}) | {r.logged_version or r.version} | {r.version} | {card} | "
                     f"`{r.command.removeprefix('vllm serve ')}` | {reported} | {called} | {printed} | {model} | "
                     f"{result} |")
    agree, unsafe = sum(x.agrees for x in table), [x.report.id for x in table if x.unsafe]
    lines += ["", f"{agree} of {len(table)} launches agree with the verdict (served as reported, or refused at the "
              f"reported check); {len(unsafe)} that failed are predicted to serve"
              + (f" ({', '.join(unsafe)}: see their rows)." if unsafe else "."), ""]
    return lines


def render(table: list[Row], reported: list[Launch]) -> str:
    lines = [
        "# vLLM calibration: public boot logs against hybridplan's vLLM model",
        "",
        "Generated by `python benchmarks/vllm_calibration_table.py` from `benchmarks/vllm_boot_logs.yaml`; "
        "`tests/engine/vllm/test_vllm_calibration.py` fails when this file is stale or a row stops reproducing.",
        "",
        "Each row: the launch as the log's `non-default args` line gives it, the card (its compute capability picks "
        "the GDN prefill kernel), and the logged `Available KV cache memory`. *Predicted* is every `GPU KV cache size` "
        "the modelled release's rules give for a pool that rounds to the logged GiB: the log's own release where "
        "hybridplan models it (every release from 0.20.0 to 0.34.0), else the modelled release the boot branches "
        "from (0.20.0 for a boot older than it, whose token line it shares; engine/vllm/versions.py); each is exact "
        "against its own code "
        "(tests/conformance/test_vllm_conformance.py), so a row that does not reproduce names a rule.",
        "",
        "| log | release | modelled as | card | launch | available KV | predicted tokens | logged tokens | "
        "predicted concurrency | logged concurrency | block | state pages / request | result |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        log, p = r.log, r.prediction
        link = log["source"].removeprefix("https://github.com/")
        launch = log["command"].removeprefix("vllm serve ")
        result = "reproduced" if r.reproduced else f"differs: {log.get('differs', 'rule not identified')}"
        if log.get("assumed"):
            result += f" (assumed: {log['assumed']})"
        lines.append(
            f"| [{link}]({log['source']}) | {log['release']} | {log['model_release']} | {log['gpu']} | `{launch}` | "
            f"{log['available_kv_gib']} GiB | {' / '.join(f'{t:,}' for t in p.tokens)} | {log['kv_cache_tokens']:,} | "
            f"{' / '.join(sorted(set(p.concurrency)))}x | {log['max_concurrency']:.2f}x | {p.block_size:,} | "
            f"{p.state_pages_per_request} of {p.blocks_per_request} | {result} |")
    lines += [
        "", "## From the card alone", "",
        "The same launches with no boot log: `explain --engine vllm --gpu G` estimates the available KV memory as "
        "vLLM's `determine_available_memory` takes it (requested = ceil(total x gpu_memory_utilization), less the "
        "weights as loaded, the non-torch overhead, the profile run's activation peak and the CUDA-graph estimate; "
        "src/hybridplan/engine/vllm/serving/memory.py, constants in src/hybridplan/data/vllm_memory.yaml with the log each "
        "was fitted on). *Error* is estimated minus logged available KV memory.", "",
        "| log | card | estimated available KV | logged | error | tokens from the estimate | logged tokens | "
        "token error | concurrency from the estimate | why it differs |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        log, k = r.log, r.card
        link = log["source"].removeprefix("https://github.com/")
        if k is None:
            lines.append(f"| [{link}]({log['source']}) | {log['gpu']} | — | {log['available_kv_gib']} GiB | — | — | "
                         f"{log['kv_cache_tokens']:,} | — | — | not estimated: {log['no_card_estimate']} |")
            continue
        err_t = 100 * (k.tokens - log["kv_cache_tokens"]) / log["kv_cache_tokens"]
        lines.append(
            f"| [{link}]({log['source']}) | {log['gpu']} | {k.available_gib:.2f} GiB | {log['available_kv_gib']} GiB | "
            f"{k.error_gib(log['available_kv_gib']):+.2f} GiB | {k.tokens:,} | {log['kv_cache_tokens']:,} | "
            f"{err_t:+.1f}% | {k.concurrency:.2f}x | {log.get('card_alone', '')} |")
    lines += ["", "Not reproduced yet (difference not identified, kept out of the table): "
              "[noonghunna/club-3090#104](https://github.com/noonghunna/club-3090/issues/104), a v0.20-era boot of the "
              "dual stack on a nightly after v0.20.1 (its kv_cache_utils.py lines are two below 0.20.1's; the capacity "
              "line is 0.20.1's, max concurrency x max_model_len): 9.84 GiB -> 619,202 tokens logged, 555,042 predicted "
              "by the 0.20.1 rules with its MTP 3 (0.20.0's blocks-per-group line would log 150,400). Planned without MTP "
              "(no speculative conv rows, state blocks or drafter layer) it reproduces exactly (1,568-token blocks, 411 "
              "blocks). [club-3090#91](https://github.com/noonghunna/club-3090/issues/91), the same launch on v0.20.1, "
              "reproduces with its MTP 3 under 0.20.1's own rules (row above), so v0.20 planned MTP as modelled; whether "
              "#104's boot ran without the drafter is not identified (its excerpt has no non-default args line).", "",
              "Public boots left out (not modelled, or a number missing from the public excerpt): DFlash/DFlash2 "
              "drafters (club-3090#46, #96, #1084, #1085, #1086, vllm-project/vllm#46462), int8_per_token_head KV "
              "(club-3090#602, #446), no `Available KV cache memory` line (club-3090#294, #295, "
              "vllm-project/vllm#40691), no `GPU KV cache size` line (club-3090#127, #1087), KDA + MLA "
              "(vllm-project/vllm#28228, Kimi-Linear: not modelled yet). The outcomes of #294, #295 and #1087 (served) "
              "are in the launches table below.", "",
              "Found with their numbers but not tabled: a v0.10.2 boot of Qwen3-Next-80B-A3B-Instruct at TP 2 on "
              "H200s (44.59 GiB -> 973,760 tokens, 14.77x at 262,144; the 0.24.0 rules without prefix caching give "
              "the logged 544-token block, 1.49% padding, 7,162 blocks (the log's num_gpu_blocks) and 14.77x, and "
              "7,162 // 4 groups x 544 = 973,760 by the pre-v0.20.1 token line) is in a public file whose repository "
              "was not identified; the Qwen3.5-4B boot beside the Qwen3.5-9B row (7.73 GiB -> 125,664 tokens, "
              "21.77x) needs a config the catalog lacks; the 0.86 L40S boot of the Qwen3.8-27B-FP8 report logs a "
              "refusal (7.04 GiB, estimated maximum model length 112,896), not a capacity (in the launches table "
              "below); vllm-project/vllm#26646 "
              "(Qwen3-Next, 90,048 tokens, 1.66x at 215,040), #50722 (Qwen3.5-35B-A3B on H100s) and "
              "eugr/spark-vllm-docker#200 (Qwen3.6-35B-A3B-FP8 with MTP 2 on a DGX Spark, 52.66 GiB -> 1,253,392 "
              "tokens at 65,536) lack the available-memory line, the capacity line or the launch in the stored "
              "thread text.", ""]
    return "\n".join(lines + launch_table(reported) + LEFT_OUT)


LEFT_OUT = [
    "Public launches found with their outcome but not in the table (the launch, the card or the model is not one "
    "hybridplan can state): [vllm-project/vllm#49064](https://github.com/vllm-project/vllm/issues/49064) also reports "
    "Qwen3.5-4B W4A16 with LoRA on an L40S at 0.85 (243 Mamba blocks < 256; no Qwen3.5-4B config in the catalog), "
    "Qwen3.6-35B-A3B W4A16 with LoRA at 0.75 (13 blocks; max_model_len and the W4A16 bytes not stated) and Qwen3.8-27B "
    "on 2x RX 7900 XT (ROCm 7.14, vLLM 0.23.1, 0.85: the KV refusal at 132,000 with 'estimated maximum model length is "
    "123872', then 256 > 161 blocks at 122,633; 3.86 GiB, 123,399 tokens; the card is not in data/gpus.yaml); "
    "[kaito-project/kaito#2319](https://github.com/kaito-project/kaito/issues/2319) (Qwen3.6-27B on an H100, vLLM "
    "0.25.1, 1024 > 614 blocks: KAITO's generated launch is not shown); "
    "[vllm-project/vllm#38599](https://github.com/vllm-project/vllm/pull/38599) (CI: "
    "nvidia/Qwen3.5-397B-A17B-NVFP4 with data parallel 2 and expert parallel on B200s, 1024 > 600 blocks: DP+EP is not "
    "modelled); [NVIDIA-AI-Blueprints/retail-shopping-assistant#95]"
    "(https://github.com/NVIDIA-AI-Blueprints/retail-shopping-assistant/pull/95) (Nemotron 3 Super on 2x H100 in a NIM, "
    "1024 > 524 blocks: the NIM's vLLM release and profile are not shown); "
    "[NVIDIA-NeMo/RL#2620](https://github.com/NVIDIA-NeMo/RL/issues/2620) (Nemotron-Nano-12B-v2, 1024 > 658 blocks: no "
    "config in the catalog); [vllm-project/recipes#810](https://github.com/vllm-project/recipes/pull/810) (Qwen3.8-27B "
    "FP8 and NVFP4 at TP 2 on RTX 5090s, 262,144, served with 377,456 and 445,875 tokens on 0.26.1rc1.dev608: the "
    "recipe's MTP setting and utilization are not in the text); a vLLM fork on an MI300X (Qwen3.6-35B-A3B, 1024 > 784 "
    "blocks at 0.45, then 'Free memory on device cuda:0 (24.05/191.69 GiB) on startup is less than desired GPU memory "
    "utilization (0.85, 162.93 GiB)' with a second engine still resident) and a NIM footprint study of Nemotron Nano 9B "
    "v2 and Nemotron 3 Nano NVFP4 on an RTX 5090 ('No available memory for the cache blocks' at 0.675 and 0.625, 256 > "
    "213 Mamba blocks at 0.725), whose repositories were not identified; club-3090's long-text composes (TurboQuant 3-bit "
    "KV and Genesis patches, not modelled: #35's refusal of 180,000 with 3.05 GiB needed of 2.17, estimated 111,456).",
    ""]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true")
    ns = ap.parse_args()
    text = render(rows(), launches())
    if ns.check:
        same = ns.out.exists() and ns.out.read_text() == text
        sys.stderr.write("" if same else f"{ns.out} is stale: run benchmarks/vllm_calibration_table.py\n")
        return 0 if same else 1
    ns.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
