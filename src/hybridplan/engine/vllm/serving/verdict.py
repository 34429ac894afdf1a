"""Will a vLLM launch start and serve on a card, and if not, at which of vLLM's own checks does it stop, with its
message and numbers: every check between parsing and serving, in vLLM's order.

config (the model length and the launch's values: refused while resolving, before any of this runs) ->
free_memory (v1/worker/utils.py::request_memory: the requested share must be free at startup) -> weights (they load
before the profile run: more than the card has free runs out of memory) -> kv_cache (the KV planning: memory for the
cache blocks, and for one request of max_model_len) -> cuda_graph (full CUDA graphs need one Mamba cache block per
decode sequence: config/compilation.py::resolve_cudagraph_mode_and_sizes). The activation peak and the CUDA-graph
memory come out of the available KV memory before the pool is sized (gpu_worker.py::determine_available_memory), so
vLLM's own profile keeps capture and the first request inside the requested share. On a card that shares its memory
with the host the host's growth during startup comes out of it too, which the launch does not determine: there the
card-alone pool is an upper bound, and the last two checks hold only while that growth stays below the slack they
leave (startup.py::host_growth_slack), which the verdict holds to the growth public boots on such a card measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from hybridplan.engine.verdict import Verdict
from hybridplan.engine.vllm.planning import KVPlan, VllmArgs
from hybridplan.engine.vllm.serving.memory import GIB, HostGrowth, VllmMemory, free_at_startup
from hybridplan.engine.vllm.startup import (MAMBA_BLOCKS_RULE, REQUEST_MEMORY_RULE, HostGrowthSlack, check_free_memory,
                                            check_mamba_blocks, host_growth_slack)
from hybridplan.errors import EngineRefusal
from hybridplan.evidence import Confidence, EvidencePoint, Probe
from hybridplan.evidence import confidence as evidence_confidence

PHASES = ("config", "free_memory", "weights", "kv_cache", "cuda_graph")


@dataclass(frozen=True, kw_only=True)
class Check:
    """One of vLLM's startup checks on this launch: passed, failed, or not decidable from what is known."""

    name: str
    phase: str
    rule: str
    passed: bool | None  # None: not decidable here (the reason in `detail`)
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "phase": self.phase, "rule": self.rule, "passed": self.passed,
                "detail": self.detail}


@dataclass(frozen=True, kw_only=True)
class Memory:
    """What sized the pool: the card alone (its timeline) or a measured boot's logged available KV memory."""

    available: int  # bytes (<= 0: nothing left for cache blocks)
    timeline: VllmMemory | None = None  # the card-alone estimate, term by term
    measured: bool = False  # from a boot's `Available KV cache memory` at this launch's utilization
    unified: bool = False  # the card shares its memory with the host
    others: int = 0  # bytes other processes hold on the card at startup (nvidia-smi)
    host_growth: HostGrowth | None = None  # a unified card: what public boots there lost to the host during startup
    generic: bool = False  # a card known only by its memory (--gpu-memory-gib alone)


def _gib(n: float) -> float:
    return round(n / GIB, 2)


def startup(args: VllmArgs, memory: Memory, plan: KVPlan | EngineRefusal) -> tuple[Verdict, list[Check]]:
    """The verdict and every check in vLLM's order, from the resolved launch, what sized its pool and the pool's
    plan (or the KV planning's refusal)."""
    checks = [Check(name="the launch's values and the model length", phase="config",
                    rule="config/model.py::_get_and_verify_max_len", passed=True,
                    detail=f"max_model_len {args.max_model_len:,}" + (" (auto-fit)" if args.auto_fit else ""))]
    figures: dict[str, Any] = {"available_kv_gib": _gib(memory.available), "max_num_seqs": args.max_num_seqs,
                               "cudagraph_mode": args.cudagraph_mode}
    tl = memory.timeline
    if tl is not None:
        free = free_at_startup(int(tl.total.value), memory.others)
        requested = int(tl.requested.value)
        figures |= {"requested_gib": _gib(requested), "free_at_startup_gib": _gib(free.value),
                    "weights_gib": _gib(tl.weights.value)}
        refusal = None if memory.unified else check_free_memory(int(free.value), int(tl.total.value),
                                                                args.gpu_memory_utilization, requested)
        checks.append(Check(
            name="free memory at startup", phase="free_memory", rule=REQUEST_MEMORY_RULE,
            passed=None if memory.unified else refusal is None,
            detail=("the card shares its memory with the host: what the host holds at startup is not known here"
                    if memory.unified else
                    f"{_gib(free.value)} GiB free at startup (an estimate: data/vllm_memory.yaml startup_used_gib) for "
                    f"the {_gib(requested)} GiB requested")))
        if refusal is not None:
            return _fails("free_memory", refusal, figures, checks), checks
        if tl.weights.value > free.value:
            checks.append(Check(name="the weights load", phase="weights", rule="model_executor/model_loader",
                                passed=False, detail=f"{_gib(tl.weights.value)} GiB per rank"))
            return Verdict(serves=False, phase="weights", figures=figures, why=(
                f"the weights ({_gib(tl.weights.value)} GiB per rank) are more than the {_gib(free.value)} GiB free "
                "when the worker starts: CUDA out of memory while loading")), checks
        checks.append(Check(name="the weights load", phase="weights", rule="model_executor/model_loader",
                            passed=True, detail=f"{_gib(tl.weights.value)} GiB per rank of {_gib(free.value)} free"))
    else:
        checks.append(Check(name="free memory at startup and the weights", phase="free_memory",
                            rule=REQUEST_MEMORY_RULE, passed=True if memory.measured else None,
                            detail="the measured boot started at this utilization" if memory.measured else
                            "no card: what is free at startup is not known"))
    if isinstance(plan, EngineRefusal):
        checks.append(Check(name="memory for the cache blocks and one max_model_len request", phase="kv_cache",
                            rule=plan.rule, passed=False, detail=plan.message))
        return _fails("kv_cache", plan, figures, checks), checks
    figures |= {"num_blocks": plan.num_blocks, "kv_cache_tokens": plan.kv_cache_tokens,
                "max_concurrency": round(plan.max_concurrency, 2), "max_model_len": plan.max_model_len}
    shared = _shared(args, memory, plan)
    broken = None if shared is None else shared.broken
    if shared is not None:
        figures["host_growth_tolerated_gib"] = _gib(shared.slack.tolerated)
    checks.append(Check(name="memory for the cache blocks and one max_model_len request", phase="kv_cache",
                        rule=f"{args.planning_module}::_check_enough_kv_cache_memory",
                        passed=broken is None or broken[0] != "kv_cache",
                        detail=f"{plan.num_blocks:,} blocks of {plan.bytes_per_block:,} B; one request at "
                               f"{plan.max_model_len:,} tokens takes {plan.blocks_per_request}"
                               + _holds_while(shared, "kv_cache")))
    if shared is not None and broken is not None and broken[0] == "kv_cache":
        return Verdict(serves=False, phase="kv_cache", figures=figures, why=(
            f"one request of {plan.max_model_len:,} tokens takes {plan.blocks_per_request} of the card-alone "
            f"estimate's {plan.num_blocks:,} blocks only while the host grows by less than {_gib(broken[1])} GiB "
            "during startup: with the growth public boots measured vLLM refuses to start, too little KV cache memory "
            f"for one max_model_len request ({shared.evidence})")), checks
    blocks = check_mamba_blocks(args.max_num_seqs, plan.num_blocks, args.cudagraph_mode)
    left = None if shared is None else shared.blocks_left(plan)
    shrunk = None if left is None or broken is None else check_mamba_blocks(args.max_num_seqs, left,
                                                                            args.cudagraph_mode)
    checks.append(Check(
        name="one Mamba cache block per decode sequence under full CUDA graphs", phase="cuda_graph",
        rule=MAMBA_BLOCKS_RULE, passed=None if args.max_num_seqs is None else blocks is None and shrunk is None,
        detail=(f"cudagraph_mode {args.cudagraph_mode} ({args.cudagraph_reason}): max_num_seqs "
                f"{args.max_num_seqs if args.max_num_seqs is not None else 'depends on the card (give --gpu)'} for "
                f"{plan.num_blocks:,} blocks" + _holds_while(shared, "cuda_graph"))))
    if blocks is not None:
        return _fails("cuda_graph", blocks, figures, checks), checks
    if shared is not None and broken is not None and shrunk is not None:
        return Verdict(serves=False, phase="cuda_graph", figures=figures, message=shrunk.message, rule=shrunk.rule,
                       why=(f"the card-alone estimate's {plan.num_blocks:,} blocks cover max_num_seqs "
                            f"{args.max_num_seqs} only while the host grows by less than {_gib(broken[1])} GiB during "
                            f"startup, and the {shared.growth.largest.gib:g} GiB public boots measured leaves {left:,}: "
                            f"vLLM refuses to start: {shrunk.message} ({shared.evidence})")), checks
    why = (f"{plan.num_blocks:,} blocks hold {plan.max_concurrency:.2f} requests of {plan.max_model_len:,} tokens"
           + (f" and cover max_num_seqs {args.max_num_seqs}" if args.max_num_seqs is not None else ""))
    if shared is not None:
        why += (f"; on a card that shares its memory with the host this holds while the host grows by less than "
                f"{_gib(shared.slack.tolerated)} GiB during startup ({shared.evidence})")
    return Verdict(serves=True, phase=None, why=why, figures=figures), checks


@dataclass(frozen=True)
class _Shared:
    """A unified card's card-alone pool: what it can lose to the host and still pass the checks after the profile,
    against the host growth public boots there measured."""

    slack: HostGrowthSlack
    growth: HostGrowth
    available: int

    @property
    def lost(self) -> int:
        """The largest growth measured, in bytes."""
        return int(self.growth.largest.gib * GIB)

    @property
    def broken(self) -> tuple[str, int] | None:
        """The first check (phase, its slack) that growth breaks."""
        return self.slack.breaks(self.lost)

    def blocks_left(self, plan: KVPlan) -> int:
        """The blocks vLLM plans once the host took the largest growth measured."""
        return max(0, (self.available - self.lost) // plan.bytes_per_block)

    @property
    def evidence(self) -> str:
        """Why the growth comes out of the KV memory and what public boots measured, each with its link."""
        points = sorted(self.growth.points, key=lambda p: -p.gib)
        return ("vLLM takes what the host takes meanwhile out of the KV memory (utils/mem_utils.py::"
                "MemorySnapshot.measure reads the host's available memory on a unified card); public boots measured "
                + "; ".join(f"{p.gib:g} GiB {p.what} ({p.link})" for p in points))


def _shared(args: VllmArgs, memory: Memory, plan: KVPlan) -> _Shared | None:
    """The host-growth rule for a pool estimated from a unified card alone (a measured boot's memory already lost
    what its host took; a discrete card's host is not in vLLM's count)."""
    if memory.host_growth is None or memory.timeline is None:
        return None
    slack = host_growth_slack(memory.available, plan.bytes_per_block, plan.blocks_per_request,
                              args.checks_hold_null_block, args.auto_fit, args.max_num_seqs, args.cudagraph_mode)
    return None if slack is None else _Shared(slack=slack, growth=memory.host_growth, available=memory.available)


def _holds_while(shared: _Shared | None, phase: str) -> str:
    """A check's detail on a unified card: the host growth it survives."""
    left = None if shared is None else dict(shared.slack.slack).get(phase)
    return "" if left is None else f"; holds while the host grows by less than {_gib(left)} GiB during startup"


def _fails(phase: str, refusal: EngineRefusal, figures: dict[str, Any], checks: list[Check]) -> Verdict:
    """vLLM stops at `phase` with its own message."""
    return Verdict(serves=False, phase=phase, why=f"vLLM refuses to start: {refusal.message}", figures=figures,
                   message=refusal.message, rule=refusal.rule)


def confidence(memory: Memory, on_card: tuple[Probe, Sequence[EvidencePoint]] | None = None) -> Confidence:
    """What the verdict rests on: a measured boot's available KV memory makes the pool's arithmetic exact (vLLM's
    own code, held to it by the conformance suite); the card alone rests on the memory estimate's constants, each
    fitted on the public boots data/vllm_memory.yaml names (docs/vllm-calibration.md lists the error per boot), and
    on the public vLLM launches on the card or its class (`on_card`: the launch as evidence.py compares it, and the
    measured launches there), which it names: measured where one is this launch, else the nearest."""
    if memory.measured:
        return Confidence(level="measured", basis=("the boot's logged 'Available KV cache memory'",),
                          note="blocks, capacity and the startup checks after it are vLLM's own arithmetic on it")
    card = ("a card known only by its memory: what torch sees of it (memory.total less the driver's reserve) and "
            "its compute capability (taken as sm90's kernels and batch defaults)",) if memory.generic else ()
    unknowns = ("the weights as loaded", "the non-torch overhead", "the profiled activation peak", *card)
    note = ("the available KV memory is estimated from the card alone (memory.timeline)"
            + (", a card known only by its memory" if memory.generic else "")
            + "; one boot's 'Available KV cache memory' (--kv-memory-gib) makes it measured")
    if on_card is None:
        found = Confidence(level="extrapolated", basis=(), unknowns=unknowns, note=note)
    else:
        found = evidence_confidence(*on_card)
        if found.level != "measured":
            found = replace(found, unknowns=found.unknowns + unknowns, note=f"{found.note}; {note}")
    growth = memory.host_growth
    if growth is None or memory.timeline is None:
        return found
    return replace(found, basis=found.basis + tuple(p.cite() for p in growth.points),
                   unknowns=found.unknowns + ("the host's growth during startup",),
                   note=f"{found.note}; the card shares its memory with the host, whose growth during startup vLLM "
                        f"takes from the KV memory: held to the largest public boots measured, "
                        f"{growth.largest.gib:g} GiB ({growth.largest.link})")
