"""`plan --engine vllm`: the fewest changes to a vLLM launch that serve C requests of L tokens, from one measured boot.

The evidence is the boot's logged `Available KV cache memory` A at its `gpu_memory_utilization` u0. vLLM requests
ceil(total x u) bytes and takes the weights, the profiled activation peak and the CUDA-graph estimate from that
(v1/worker/utils.py::request_memory, v1/worker/gpu_worker.py::determine_available_memory), none of which depends on
u, the KV dtype, the prefix-caching mode or max_model_len: so the KV memory at u is A + ceil(total x u) -
ceil(total x u0), taking A at the low end of its 0.01 GiB rounding. Without a boot the KV memory at u is the card-alone
estimate (engine/vllm/serving/memory.py), and u stays within the no-evidence bound SGLang's plan uses (evidence.py:
max(engine default + NO_EVIDENCE_STEP, NO_EVIDENCE_FLOOR)). Each candidate is then planned by the engine model.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from hybridplan.engine.search import Knob, candidates
from hybridplan.errors import BadInput, EngineRefusal

if TYPE_CHECKING:
    from hybridplan.engine.vllm.engine import VllmEngine
    from hybridplan.engine.vllm.planning import VllmArgs
    from hybridplan.engine.vllm.command import VllmCommand
    from hybridplan.engine.registry import FlagRegistry
    from hybridplan.models.geometry import ModelGeometry

GIB = 2**30
UTIL_STEP = 0.01


@dataclass(frozen=True, kw_only=True)
class Card:
    """What vLLM reads of the card: compute capability x10, torch's total memory (its init snapshot), the name."""

    sm: int | None = 90
    total_memory_bytes: int | None = None
    name: str = ""
    cuda_runtime_major: int = 12  # the CUDA runtime vLLM was built for (13+: FlashInfer GDN prefill on Blackwell)


def card(gpu: str | None, cuda_runtime_major: int = 12) -> Card:
    """A catalog GPU as vLLM sees it (no card: an sm90 card of unknown memory)."""
    if gpu is None:
        return Card(cuda_runtime_major=cuda_runtime_major)
    from hybridplan.hardware.catalog import from_options

    g = from_options(gpu, None)
    if g is None:
        return Card(cuda_runtime_major=cuda_runtime_major)
    mib = g.torch_total_mib if g.torch_total_known and g.torch_total_mib is not None else g.memory_mib
    return Card(sm=g.sm, total_memory_bytes=mib << 20, name=g.name, cuda_runtime_major=cuda_runtime_major)


def resolve_on(engine: "VllmEngine", cmd: "VllmCommand", geo: "ModelGeometry", c: Card) -> "VllmArgs":
    """The engine's resolution of `cmd` on card `c`."""
    return engine.resolve(cmd, geo, c.sm, c.total_memory_bytes, c.name, c.cuda_runtime_major)


@dataclass(frozen=True, kw_only=True)
class VllmTarget:
    """The launch, the boot that measured it, the card and the workload."""

    command: str
    kv_memory_gib: float | None  # the boot's logged available KV memory at its own utilization (None: no boot)
    card: Card
    request_length: int
    concurrency: int
    max_util: float  # the highest gpu_memory_utilization a candidate may ask for


KVAt = Callable[[Any, float], int]  # (resolved args, utilization) -> available KV memory in bytes


def _measured(t: VllmTarget, u0: float, kv_gib: float) -> KVAt:
    """Available KV memory at utilization u, from the boot measured at u0 (its low rounding end)."""
    total = t.card.total_memory_bytes or 0
    return lambda _args, u: int((kv_gib - 0.005) * GIB) + math.ceil(total * u) - math.ceil(total * u0)


def _from_card(gpu: str, quantization: str | None) -> KVAt:
    """Available KV memory at utilization u estimated from the card alone (engine/vllm/serving/memory.py); 0 when the
    weights and runtime leave none (the engine model then refuses the plan)."""
    from hybridplan.hardware.catalog import from_options
    from hybridplan.engine.vllm.serving.memory import from_card

    g = from_options(gpu, None)
    if g is None:
        raise BadInput(f"--gpu: {gpu!r} is not a catalog card (the card-alone estimate needs its memory)")

    def at(args: Any, u: float) -> int:
        try:
            return int(from_card(replace(args, gpu_memory_utilization=u), g, quantization).available.value)
        except BadInput:
            return 0
    return at


def no_evidence_ceiling(engine_default: float) -> float:
    """The highest utilization a plan proposes without a comparable measured launch (evidence.py's rule)."""
    from hybridplan.evidence import NO_EVIDENCE_FLOOR, NO_EVIDENCE_STEP

    return round(max(engine_default + NO_EVIDENCE_STEP, NO_EVIDENCE_FLOOR), 3)


def plan_vllm(t: VllmTarget, version: str | None = None, gpu: str | None = None) -> dict[str, Any]:
    """The baseline (the launch at the target's length) and, cheapest first, the candidates that fit. Without the
    measured boot (t.kv_memory_gib None) the KV memory comes from catalog card `gpu` alone."""
    from hybridplan.engine.vllm.engine import for_version
    from hybridplan.models.loader import load_model

    if "non-default args:" in t.command:
        raise BadInput("plan --engine vllm: give the launch command after `--` (it is rewritten), not the log line")
    if t.card.total_memory_bytes is None:
        raise BadInput("plan --engine vllm: --gpu is required (gpu_memory_utilization is a share of its memory)")
    engine = for_version(version)
    base = engine.parse_command(t.command)
    geo = load_model(str(base.values.get("model") or ""))
    default_u = 0.92  # config/cache.py::CacheConfig.gpu_memory_utilization
    u0 = float(base.values.get("gpu_memory_utilization", default_u))
    if t.kv_memory_gib is None:
        if gpu is None:
            raise BadInput("plan --engine vllm: --gpu is required (gpu_memory_utilization is a share of its memory)")
        quant = base.values.get("quantization")
        kv_at = _from_card(gpu, None if quant is None else str(quant))
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
        kv_at = _measured(t, u0, t.kv_memory_gib)
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
        row = _fit(engine, geo, t, u0, [*flags, *cap, "--max-model-len", str(t.request_length)], kv_at)
        if row is not None:
            row["why"] = {flag: _WHY[flag][1] for flag in row["changes"]}
            rows.append(row)
    # the cheapest changes first (_WHY's costs: what each gives up), then the lowest utilization
    rows.sort(key=lambda r: (not r["fits"], sum(_WHY[f][0] for f in r["changes"]), r["gpu_memory_utilization"]))
    baseline = _fit(engine, geo, replace(t, max_util=u0), u0, ["--max-model-len", str(t.request_length)], kv_at)
    best = next((r for r in rows if r["fits"]), None)
    return {"engine": "vllm", "engine_version": engine.version,
            "target": {"request_length": t.request_length, "concurrency": t.concurrency},
            "measured": measured,
            "baseline": baseline, "candidates": rows, "fits": best is not None,
            "command": None if best is None else _rewrite(reg, base, best, t.request_length),
            "best": best,
            "max_num_seqs": seqs, "warnings": warnings}


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
}


def _knob(flag: str, value: str | None = None) -> Knob:
    """One change the search may make, priced and explained by _WHY."""
    cost, why = _WHY[flag]
    return Knob(label=f"{flag} {value}" if value else flag, sets=((flag, value),), cost=cost, why=why)


def _fit(engine: "VllmEngine", geo: "ModelGeometry", t: VllmTarget, u0: float, flags: list[str], kv_at: KVAt) -> dict[str, Any] | None:
    """The smallest utilization (from the measured one up to max_util) at which the launch with `flags` serves the
    target concurrency at the target length; the plan at max_util when none does. None: the engine refuses it."""
    cmd = engine.parse_command(t.command + " " + shlex.join(flags))
    args = resolve_on(engine, cmd, geo, t.card)
    steps = max(0, int(round((t.max_util - u0) / UTIL_STEP)))
    last = None
    for i in range(steps + 1):
        u = round(u0 + i * UTIL_STEP, 4)
        try:
            p = engine.plan(args, geo, kv_at(args, u))
        except EngineRefusal:
            continue
        last = (u, p)
        if _serves(p, args, t):
            break
    if last is None:
        return None
    u, p = last
    changes = {k: v for k, v in _pairs(flags).items() if k != "--max-model-len"}
    if u != u0:
        changes["--gpu-memory-utilization"] = f"{u:g}"
    return {"changes": changes, "gpu_memory_utilization": u, "available_kv_gib": round(kv_at(args, u) / GIB, 3),
            "mamba_cache_mode": p.mamba_cache_mode, "block_size": p.block_size, "kv_cache_tokens": p.kv_cache_tokens,
            "max_concurrency": p.max_concurrency, "state_pages_per_request": p.state_pages_per_request,
            "max_num_seqs": args.max_num_seqs, "fits": _serves(p, args, t)}


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
