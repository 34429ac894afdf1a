"""`plan --engine vllm`: the fewest changes to a vLLM launch that serve C requests of L tokens, from one measured boot.

The evidence is the boot's logged `Available KV cache memory` A at its `gpu_memory_utilization` u0. vLLM requests
ceil(total x u) bytes and takes the weights, the profiled activation peak and the CUDA-graph estimate from that
(v1/worker/utils.py::request_memory, v1/worker/gpu_worker.py::determine_available_memory), none of which depends on
u, the KV dtype, the prefix-caching mode or max_model_len: so the KV memory at u is A + ceil(total x u) -
ceil(total x u0), taking A at the low end of its 0.01 GiB rounding. Without a boot the KV memory at u is the card-alone
estimate (engine/vllm/serving/memory.py), and u stays within the no-evidence bound SGLang's plan uses (evidence.py:
max(engine default + NO_EVIDENCE_STEP, NO_EVIDENCE_FLOOR)). Each candidate is then planned by the engine model; on a
card that shares its memory with the host the card-alone pool is an upper bound (vLLM takes the host's growth during
startup from it), so a candidate must pass the checks and hold the target after the largest growth public boots there
measured (serving/verdict.py, data/vllm_memory.yaml unified_host_growth).
"""

from __future__ import annotations

import math
import shlex
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hybridplan.engine.search import Knob, candidates
from hybridplan.engine.vllm.serving.launch import (KVAt, VllmTarget, card_memory, measured_memory, on_card,
                                                   resolve_on)
from hybridplan.engine.verdict import Verdict
from hybridplan.engine.vllm.serving.memory import estimate_margin
from hybridplan.engine.vllm.serving.verdict import Memory, startup
from hybridplan.engine.vllm.startup import full_graphs
from hybridplan.errors import BadInput, EngineRefusal

if TYPE_CHECKING:
    from hybridplan.evidence import EvidenceSource
    from hybridplan.engine.vllm.engine import VllmEngine
    from hybridplan.engine.vllm.planning import KVPlan
    from hybridplan.engine.vllm.planning import VllmArgs
    from hybridplan.engine.vllm.command import VllmCommand
    from hybridplan.engine.registry import FlagRegistry
    from hybridplan.models.geometry import ModelGeometry

GIB = 2**30
UTIL_STEP = 0.01


def no_evidence_ceiling(engine_default: float) -> float:
    """The highest utilization a plan proposes without a comparable measured launch (evidence.py's rule)."""
    from hybridplan.evidence import NO_EVIDENCE_FLOOR, NO_EVIDENCE_STEP

    return round(max(engine_default + NO_EVIDENCE_STEP, NO_EVIDENCE_FLOOR), 3)


def plan_vllm(t: VllmTarget, version: str | None = None, gpu: str | None = None, gpu_memory_gib: float | None = None,
              evidence: EvidenceSource | None = None) -> dict[str, Any]:
    """The baseline (the launch at the target's length) and, cheapest first, the candidates that fit, and the verdict
    as explain gives it (fed back through it: its checks and its confidence, from `evidence`, the measured launches
    on the card) on the proposed command, else on the launch at the target's length. Without the measured boot
    (t.kv_memory_gib None) the KV memory comes from the card alone: catalog card `gpu` (`gpu_memory_gib` over its
    memory), or a card known only by its memory (`gpu_memory_gib` alone)."""
    from hybridplan.engine.vllm.engine import for_version
    from hybridplan.models.loader import load_model

    if "non-default args:" in t.command:
        raise BadInput("plan --engine vllm: give the launch command after `--` (it is rewritten), not the log line")
    if t.card.total_memory_bytes is None:
        raise BadInput("plan --engine vllm: --gpu (or --gpu-memory-gib) is required (gpu_memory_utilization is a "
                       "share of its memory)")
    engine = for_version(version)
    base = engine.parse_command(t.command)
    geo = load_model(str(base.values.get("model") or ""))
    default_u = 0.92  # config/cache.py::CacheConfig.gpu_memory_utilization
    u0 = float(base.values.get("gpu_memory_utilization", default_u))
    card_gpu = on_card(gpu, gpu_memory_gib)
    if t.kv_memory_gib is None:
        if card_gpu is None:
            raise BadInput("plan --engine vllm: --gpu (or --gpu-memory-gib) is required (gpu_memory_utilization is "
                           "a share of its memory)")
        quant = base.values.get("quantization")
        kv_at = card_memory(card_gpu, None if quant is None else str(quant))
        ceiling = no_evidence_ceiling(default_u)
        if t.max_util > ceiling:
            t = replace(t, max_util=max(ceiling, u0))
        capped = f"; --max-util caps it at {t.max_util:g}" if t.max_util < ceiling else ""
        measured: dict[str, Any] = {"source": "card", "gpu_memory_utilization": u0, "engine_default": default_u,
                                    "ceiling": t.max_util,
                                    "rule": f"no measured boot: the KV memory is estimated from the card alone and the "
                                            f"utilization stays within max(engine default {default_u} + 0.05, 0.90) "
                                            f"= {ceiling} (evidence.py){capped}"}
    else:
        kv_at = measured_memory(t, u0, t.kv_memory_gib)
        measured = {"source": "boot", "available_kv_gib": t.kv_memory_gib, "gpu_memory_utilization": u0}
    kv_given = str(base.values.get("kv_cache_dtype", "auto"))
    pc_given = base.values.get("enable_prefix_caching")
    reg = engine.registry()
    pc_off = engine.prefix_caching_off
    c = t.card
    resolved = resolve_on(engine, base, geo, c)
    seqs = resolved.max_num_seqs
    # 'all' mode (a state page for every block) keeps prefix caching at the cost of state pages that grow with the
    # length; a release that honours --mamba-cache-mode can keep prefix caching in 'align' mode instead
    keep_pc: list[tuple[str, ...]] = [("--mamba-cache-mode", "align")] if resolved.mamba_cache_mode == "all" \
        and reg.knows("--mamba-cache-mode") else []
    # a float32 recurrent state (the model's own default, or the launch's) can be halved where the release's parser
    # takes bfloat16 (0.20.x's does not); Kimi-Linear's KDA layers keep float32 whatever the flag (engine/vllm/kda.py)
    ssm = reg.by_option.get("--mamba-ssm-cache-dtype")
    bf16_ssm: list[tuple[str, ...]] = [("--mamba-ssm-cache-dtype", "bfloat16")] \
        if resolved.mamba_ssm_cache_dtype == "float32" and not resolved.is_kda and ssm is not None \
        and "bfloat16" in (ssm.choices or ()) else []
    dims: list[list[Knob | None]] = [
        [None, *([CAP_SEQS] if seqs is not None and seqs > t.concurrency and full_graphs(resolved.cudagraph_mode)
                 else [])],
        [None, *([_knob(pc_off)] if pc_given is not False else []), *(_knob(*k) for k in keep_pc)],
        [None, *([_knob("--kv-cache-dtype", "fp8")] if kv_given == "auto" and not geo.kv_cache_quant_algo else [])],
        [None, *(_knob(*k) for k in bf16_ssm)],
    ]
    warnings = [f"a gpu_memory_utilization above the {'measured' if t.kv_memory_gib is not None else 'launch'}'s "
                f"{u0:g} needs that memory free on the card at startup "
                "(vLLM refuses to start otherwise: v1/worker/utils.py::request_memory)"]
    if t.kv_memory_gib is None:
        warnings.append("the KV memory is an estimate from the card alone (explain --engine vllm --gpu shows its "
                        "terms); one boot's 'Available KV cache memory' (--kv-memory-gib) replaces it")
        warnings += _unified_warning(gpu)
    cap: list[str] = []
    if seqs is not None and seqs < t.concurrency:  # the scheduler runs at most max_num_seqs requests
        cap = ["--max-num-seqs", str(t.concurrency)]
        warnings.append(f"max_num_seqs {seqs} < {t.concurrency}: raised, which changes the CUDA-graph capture sizes and "
                        + ("the profiled activation the measured boot took from the pool; boot once and plan again "
                           "from that log" if t.kv_memory_gib is not None else
                           "the profiled activation (the card-alone estimate counts the capture sizes)"))
    rows = []
    for cand in candidates(dims):
        flags = [tok for k in cand.knobs for flag, value in k.sets for tok in ((flag, value) if value else (flag,))]
        row = _fit(engine, geo, t, u0, [*flags, *cap, "--max-model-len", str(t.request_length)], kv_at,
                   cap_seqs=CAP_SEQS in cand.knobs)
        if row is not None and row.pop("capped") == (CAP_SEQS in cand.knobs):  # a cap with nothing to cap is the
            rows.append(row)                                                   # candidate without it
    # the cheapest changes first (_WHY's costs: what each gives up), then the lowest utilization
    rows.sort(key=lambda r: (not r["fits"], r["cost"], r["gpu_memory_utilization"]))
    baseline = _fit(engine, geo, replace(t, max_util=u0), u0, ["--max-model-len", str(t.request_length)], kv_at)
    if baseline is not None:
        del baseline["capped"]
    best = next((r for r in rows if r["fits"]), None)
    command = None if best is None else _rewrite(reg, base, best, t.request_length)
    # the verdict and vLLM's startup checks as explain gives them, on the proposed command (else on the launch at the
    # target's length)
    verdict, checks = _fed_back(command or _rewrite(reg, base, {"changes": {}}, t.request_length), engine.version, t,
                                u0, best or baseline, gpu, gpu_memory_gib, evidence)
    out = {"engine": "vllm", "engine_version": engine.version,
           "target": {"request_length": t.request_length, "concurrency": t.concurrency},
           "measured": measured,
           "baseline": baseline, "candidates": rows, "fits": best is not None, "command": command, "best": best,
           "verdict": verdict, "checks": checks,
           "max_num_seqs": seqs, "warnings": warnings}
    if best is None:
        from hybridplan.engine.vllm.serving.cheapest import cheapest_changes

        loosest = [tok for dim in dims if dim[-1] is not None for flag, value in dim[-1].sets
                   for tok in ((flag, value) if value else (flag,))]
        with_cap = CAP_SEQS in [dim[-1] for dim in dims]
        changes = cheapest_changes(engine, t, [*loosest, *cap], kv_at, card_gpu, lambda target, flags, at: _fit(
            engine, geo, target, u0, [*flags, "--max-model-len", str(target.request_length)], at, cap_seqs=with_cap),
            geo.quant_method)
        out |= {"cheapest_change": changes[0] if changes else None, "changes_that_fit": changes}
    return out


# what each change costs the user (the search's order) and why it is proposed (prefix caching off in both releases'
# spellings)
_WHY: dict[str, tuple[float, str]] = {
    "--max-num-seqs": (0.0, "the scheduler must be allowed to run the target's requests at once"),
    "--gpu-memory-utilization": (1.0, "more of the card for the KV cache (needs that memory free at startup)"),
    "--kv-cache-dtype": (1.0, "fp8 KV: half the attention page, so a smaller block and more tokens (a small "
                              "numerics trade-off)"),
    "--mamba-cache-mode": (1.0, "prefix caching kept in 'align' mode: 2 state pages a request instead of one a block"),
    "--no-enable-prefix-caching": (1.5, "prefix caching off: one state page a request, no reuse of cached prefixes"),
    "--disable-prefix-caching": (1.5, "prefix caching off: one state page a request, no reuse of cached prefixes"),
    "--mamba-ssm-cache-dtype": (2.0, "bfloat16 recurrent state: half the state page where the model asks for "
                                     "float32 (a numerics trade-off)"),
    "--quantization": (3.0, "the weights quantized to FP8 as they load: about half the bytes of bf16 weights (a "
                            "numerics trade-off)"),
    "--tensor-parallel-size": (4.0, "the weights and each request's pages split over more GPUs"),
}


def _fed_back(command: str, version: str, t: VllmTarget, u0: float, row: dict[str, Any] | None, gpu: str | None,
              gpu_memory_gib: float | None,
              evidence: EvidenceSource | None) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The verdict and startup checks of `command` (the candidate `row` rewritten; None: the launch refused before it
    planned), as `explain --engine vllm` gives them on the memory the plan sized it with: the card alone, or the
    boot's logged KV memory (moved by what the proposed utilization requests over the boot's, which the confidence
    says: the profile at the new utilization was not measured)."""
    from hybridplan.engine.vllm.serving.explain import explain_vllm

    measured = t.kv_memory_gib is not None
    kv = (t.kv_memory_gib if row is None else row["available_kv_gib"]) if measured else None
    back = explain_vllm(command, version=version, gpu=gpu, gpu_memory_gib=gpu_memory_gib, evidence=evidence,
                        kv_memory_gib=kv)
    verdict: dict[str, Any] | None = back.get("verdict")
    u = u0 if row is None else row["gpu_memory_utilization"]
    if verdict is not None and measured and u != u0:
        verdict["confidence"] = {**verdict["confidence"], "level": "calibrated", "margin": round(u - u0, 3),
                                 "note": f"the boot's logged 'Available KV cache memory' at utilization {u0:g}, moved "
                                         f"by what {u:g} requests over it: the profile at {u:g} was not measured"}
    return verdict, list(back.get("checks") or [])


def _knob(flag: str, value: str | None = None) -> Knob:
    """One change the search may make, priced and explained by _WHY."""
    cost, why = _WHY[flag]
    return Knob(label=f"{flag} {value}" if value else flag, sets=((flag, value),), cost=cost, why=why)


def _fit(engine: "VllmEngine", geo: "ModelGeometry", t: VllmTarget, u0: float, flags: list[str], kv_at: KVAt,
         cap_seqs: bool = False) -> dict[str, Any] | None:
    """The smallest utilization (from the measured one up to max_util) at which the launch with `flags` passes every
    startup check of the release (engine/vllm/serving/verdict.py) and serves the target concurrency at the target
    length (on a unified card, after the host growth public boots there measured: _holds); the plan at max_util when
    none does. `cap_seqs`: max_num_seqs is capped at the Mamba cache blocks the
    pool has (full CUDA graphs need one a decode sequence). None: the release refuses the launch before it plans."""
    cmd = engine.parse_command(t.command + " " + shlex.join(flags))
    args = resolve_on(engine, cmd, geo, t.card)
    launched_seqs = args.max_num_seqs
    steps = max(0, int(round((t.max_util - u0) / UTIL_STEP)))
    last = None
    for i in range(steps + 1):
        u = round(u0 + i * UTIL_STEP, 4)
        at, memory, p, verdict = _checked(engine, geo, args, u, kv_at, t.concurrency if cap_seqs else None)
        if verdict.phase == "free_memory":  # more of the card is only further from free
            break
        if isinstance(p, EngineRefusal):
            continue
        fits = verdict.serves and _holds(engine, geo, at, memory, p, t)
        last = (u, at, memory, p, verdict, fits)
        if fits:
            break
    if last is None:
        return None
    u, args, memory, p, verdict, fits = last
    capped = cap_seqs and args.max_num_seqs != launched_seqs  # else the blocks covered the launch's own max_num_seqs
    changes = {k: v for k, v in _pairs(flags).items() if k != "--max-model-len"}
    if capped and args.max_num_seqs is not None:
        changes["--max-num-seqs"] = str(args.max_num_seqs)
    if u != u0:
        changes["--gpu-memory-utilization"] = f"{u:g}"
    why = {flag: _WHY[flag][1] for flag in changes}
    if capped:
        why["--max-num-seqs"] = CAP_SEQS.why
    cost = sum(_WHY[f][0] for f in changes if f != "--max-num-seqs" or not capped) + (CAP_SEQS.cost if capped else 0.0)
    return {"changes": changes, "gpu_memory_utilization": u, "available_kv_gib": round(memory.available / GIB, 3),
            "mamba_cache_mode": p.mamba_cache_mode, "block_size": p.block_size, "kv_cache_tokens": p.kv_cache_tokens,
            "max_concurrency": p.max_concurrency, "state_pages_per_request": p.state_pages_per_request,
            "max_num_seqs": args.max_num_seqs, "num_blocks": p.num_blocks,
            "verdict": {k: verdict.as_dict()[k] for k in ("serves", "phase", "why")},
            "fits": fits, "why": why, "cost": round(cost, 6), "capped": capped}


def _checked(engine: "VllmEngine", geo: "ModelGeometry", args: "VllmArgs", u: float, kv_at: KVAt,
             floor: int | None) -> tuple["VllmArgs", Memory, "KVPlan | EngineRefusal", Verdict]:
    """The launch at utilization u through the release's planning and startup checks; with `floor` (the target
    concurrency) a max_num_seqs above the planned blocks is capped at them, never below the floor (fewer sequences
    capture fewer graphs, so the card-alone pool only grows: one re-plan settles it)."""
    memory = kv_at(args, u)
    try:
        p: KVPlan | EngineRefusal = engine.plan(args, geo, memory.available)
    except EngineRefusal as exc:
        p = exc
    # a card-alone estimate keeps its margin's worth of blocks below the planned count (a boot's memory is exact), and
    # on a unified card the largest host growth public boots there measured too (vLLM takes it from the pool)
    spare = 0 if isinstance(p, EngineRefusal) or memory.timeline is None else \
        math.ceil((estimate_margin()[0] + _host_growth_gib(memory)) * GIB / p.bytes_per_block)
    if floor is not None and not isinstance(p, EngineRefusal) and args.max_num_seqs is not None \
            and args.max_num_seqs > p.num_blocks - spare >= floor:
        args = replace(args, max_num_seqs=p.num_blocks - spare)
        memory = kv_at(args, u)
        try:
            p = engine.plan(args, geo, memory.available)
        except EngineRefusal as exc:
            p = exc
    verdict, _ = startup(args, memory, p)
    return args, memory, p, verdict


def _unified_warning(gpu: str | None) -> list[str]:
    """On a card that shares its memory with the host: what the plan keeps for the host's growth during startup."""
    from hybridplan.hardware.catalog import from_options
    from hybridplan.engine.vllm.serving.memory import host_growth

    g = None if gpu is None else from_options(gpu, None)
    if g is None or not g.unified:
        return []
    most = host_growth().largest
    return [f"{g.name} shares its memory with the host, and vLLM takes what the host takes during startup from the KV "
            f"memory: every candidate is sized to pass vLLM's checks and hold the target after the largest growth "
            f"public boots there measured, {most.gib:g} GiB {most.what} ({most.link})"]


def _host_growth_gib(memory: Memory) -> float:
    """The largest host growth public boots measured on a unified card (0 elsewhere)."""
    return 0.0 if memory.host_growth is None else memory.host_growth.largest.gib


# the change that caps the scheduler at the blocks the pool has, when the card's default max_num_seqs is more
CAP_SEQS = Knob(label="--max-num-seqs at the Mamba cache blocks", sets=(), cost=0.5, why=(
    "at most as many requests at once as the pool has Mamba cache blocks: under full CUDA graphs each decode sequence "
    "needs one, and vLLM refuses to start with more (config/compilation.py::resolve_cudagraph_mode_and_sizes); "
    "requests beyond it wait (from the card alone, the estimate's margin of blocks is kept below the planned count: "
    "data/vllm_memory.yaml estimate_margin_gib)"))


def _holds(engine: "VllmEngine", geo: "ModelGeometry", args: "VllmArgs", memory: Memory, p: "KVPlan",
           t: VllmTarget) -> bool:
    """The pool serves the target; on a unified card from the card alone, the pool left once the host took the
    largest growth public boots there measured (vLLM takes it from the KV memory: serving/verdict.py)."""
    lost = _host_growth_gib(memory) if memory.timeline is not None else 0.0
    if lost:
        try:
            p = engine.plan(args, geo, memory.available - int(lost * GIB))
        except EngineRefusal:
            return False
    return _serves(p, args, t)


def _serves(p: Any, args: Any, t: VllmTarget) -> bool:
    """The pool holds C requests at L tokens and the scheduler may run them (max_num_seqs)."""
    return bool(p.max_concurrency >= t.concurrency and (args.max_num_seqs is None or args.max_num_seqs >= t.concurrency))


def _pairs(flags: list[str]) -> dict[str, str]:
    """Flag -> value ("" for a switch) of a flag list."""
    out: dict[str, str] = {}
    i = 0
    while i < len(flags):
        takes = i + 1 < len(flags) and not flags[i + 1].startswith("--")
        out[flags[i]] = flags[i + 1] if takes else ""
        i += 2 if takes else 1
    return out


def _rewrite(reg: "FlagRegistry", base: "VllmCommand", row: dict[str, Any], length: int) -> str:
    """The launch with the flags the candidate changes (and --max-model-len) taken out, wherever and however the
    user spelled them (`--no-enable-prefix-caching` replaces `--enable-prefix-caching`: the same dest in the
    release's registry), and the candidate's flags and the target length appended."""
    extra = [tok for k, v in row["changes"].items() for tok in ((k, v) if v else (k,))]
    extra += ["--max-model-len", str(length)]
    changed = {reg.by_option[tok].dest for tok in extra if tok in reg.by_option}
    kept: list[str] = []
    skip = False
    for tok in base.tokens:  # as the parser split them: a pasted multi-line launch stays one
        if skip:
            skip = False
            continue
        flag = reg.by_option.get(tok.split("=", 1)[0]) if tok.startswith("-") else None
        if flag is not None and flag.dest in changed:
            skip = flag.takes_value and "=" not in tok
            continue
        kept.append(tok)
    return shlex.join(kept + extra)
