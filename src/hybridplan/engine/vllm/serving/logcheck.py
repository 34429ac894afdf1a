"""A vLLM boot log held against hybridplan's vLLM model: the launch (its `non-default args: {...}` line, or the
command given), the logged `Available KV cache memory`, and what vLLM then logged (the hybrid block size, the KV
capacity and the concurrency), each predicted or the rule that differs named."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from hybridplan.errors import BadInput
from hybridplan.engine.vllm.serving import memory_log as memlog
from hybridplan.engine.vllm.serving.memory_log import GIB, ROUNDING

if TYPE_CHECKING:
    from hybridplan.engine.vllm.planning import VllmArgs

_AVAILABLE = re.compile(r"Available KV cache memory: ([0-9.]+) GiB")
_TOKENS = re.compile(r"GPU KV cache size: ([0-9,]+) tokens")
_CONCURRENCY = re.compile(r"Maximum concurrency for ([0-9,]+) tokens per request: ([0-9.]+)x")
_BLOCK = re.compile(r"Setting attention block size to (\d+) tokens")
_PADDING = re.compile(r"Padding mamba page size by ([0-9.]+)%")
_ARGS = re.compile(r"non-default args: \{.*\}")
_RELEASE = re.compile(r"LLM engine \(v([0-9][^)\s]*)\)")


@dataclass(frozen=True, kw_only=True)
class VllmLog:
    """The numbers a vLLM boot log states (None where it does not)."""

    available_kv_gib: float | None  # the smallest worker's (get_kv_cache_configs plans every rank to the smallest)
    kv_cache_tokens: int | None
    max_model_len: int | None
    max_concurrency: float | None
    block_size: int | None  # the hybrid block size the platform set
    padding_pct: str | None  # how much the state page was padded to the attention page, as logged (%.2f)
    non_default_args: str | None
    release: str | None


def parse_vllm_log(text: str) -> VllmLog:
    """The boot log's capacity lines (vllm/v1/worker/gpu_worker.py, v1/core/kv_cache_utils.py::
    update_kv_cache_capacity, platforms/interface.py::_align_hybrid_block_size, the API server's args line)."""
    avail = [float(m) for m in _AVAILABLE.findall(text)]
    tokens = _TOKENS.search(text)
    conc = _CONCURRENCY.search(text)
    block = _BLOCK.search(text)
    padding = _PADDING.search(text)
    args = _ARGS.search(text)
    release = _RELEASE.search(text)
    return VllmLog(available_kv_gib=min(avail) if avail else None,
                   kv_cache_tokens=int(tokens.group(1).replace(",", "")) if tokens else None,
                   max_model_len=int(conc.group(1).replace(",", "")) if conc else None,
                   max_concurrency=float(conc.group(2)) if conc else None,
                   block_size=int(block.group(1)) if block else None,
                   padding_pct=padding.group(1) if padding else None,
                   non_default_args=args.group(0) if args else None,
                   release=release.group(1) if release else None)


@dataclass(frozen=True, kw_only=True)
class Prediction:
    """Every capacity vLLM logs for a pool in the rounded GiB interval [gib - 0.005, gib + 0.005)."""

    tokens: tuple[int, ...]
    concurrency: tuple[str, ...]  # as the log prints it (%.2f)
    block_size: int
    padding_pct: str  # (page - state page) / state page, as vLLM logs it
    max_model_len: int
    state_pages_per_request: int
    blocks_per_request: int
    args: "VllmArgs"  # the launch as the release resolved it (the memory estimate reads it)
    quantization: str | None  # --quantization as launched (it prices the weights)


def predict(command_text: str, gib: float, gpu: str | None, version: str | None = None) -> Prediction:
    """The engine's plans for each block count the rounded available memory allows, on a catalog card."""
    from hybridplan.engine.vllm.engine import for_version
    from hybridplan.models.loader import load_model
    from hybridplan.engine.vllm.serving.launch import card, resolve_on

    engine = for_version(version)
    cmd = engine.parse_command(command_text)
    if not cmd.values.get("model"):
        raise BadInput("the vLLM launch names no model")
    geo = load_model(str(cmd.values["model"]))
    c = card(gpu)
    args = resolve_on(engine, cmd, geo, c)
    lo = engine.plan(args, geo, int((gib - ROUNDING) * GIB))
    hi = int((gib + ROUNDING) * GIB) - 1
    plans = [engine.plan(args, geo, n * lo.bytes_per_block) for n in range(lo.num_blocks, hi // lo.bytes_per_block + 1)]
    return Prediction(tokens=tuple(dict.fromkeys(p.kv_cache_tokens for p in plans)),
                      concurrency=tuple(f"{p.max_concurrency:.2f}" for p in plans), block_size=lo.block_size,
                      padding_pct=f"{100 * (lo.page_bytes - lo.state_page_bytes) / lo.state_page_bytes:.2f}",
                      max_model_len=lo.max_model_len, state_pages_per_request=lo.state_pages_per_request,
                      blocks_per_request=lo.blocks_per_request, args=args,
                      quantization=None if cmd.values.get("quantization") is None else str(cmd.values["quantization"]))


def check_vllm_log(text: str, command_text: str | None, *, gpu: str | None = None,
                   version: str | None = None) -> dict[str, Any]:
    """Predicted vs logged for each number the log states; `explained` when every one matches."""
    log = parse_vllm_log(text)
    mem = memlog.parse_memory(text)
    launch = command_text or log.non_default_args
    if launch is None:
        raise BadInput("the log has no `non-default args: {...}` line: give the launch command after `--`")
    # the startup summary's `Current kv cache memory in use` is the same figure (available_kv_cache_memory_bytes)
    available = log.available_kv_gib if log.available_kv_gib is not None else \
        (mem.summary.kv_in_use if mem.summary is not None else None)
    if available is None:
        raise BadInput("the log has no `Available KV cache memory: X GiB` line (nor the startup memory summary)")
    from hybridplan.engine.vllm.engine import for_version

    engine = for_version(version or _modelled(log.release))
    p = predict(launch, available, gpu, engine.version)
    rows: list[tuple[str, Any, Any, bool]] = []
    if log.block_size is not None:
        rows.append(("block_size", p.block_size, log.block_size, p.block_size == log.block_size))
    if log.padding_pct is not None:
        rows.append(("padding_pct", p.padding_pct, log.padding_pct, p.padding_pct == log.padding_pct))
    if log.max_model_len is not None:
        rows.append(("max_model_len", p.max_model_len, log.max_model_len, p.max_model_len == log.max_model_len))
    if log.kv_cache_tokens is not None:
        rows.append(("kv_cache_tokens", list(p.tokens), log.kv_cache_tokens, log.kv_cache_tokens in p.tokens))
    if log.max_concurrency is not None:
        logged = f"{log.max_concurrency:.2f}"
        rows.append(("max_concurrency", sorted(set(p.concurrency)), logged, logged in p.concurrency))
    rules = engine.provenance()
    checks = [{"quantity": q, "predicted": pred, "logged": got, "match": ok} | ({} if ok else {"rule": rules[q]})
              for q, pred, got, ok in rows]
    from hybridplan.engine.vllm.serving.launch import card

    checks += memlog.exact_checks(mem)
    memory: dict[str, Any] = {"model_loading_gib": mem.model_loading,
                              "summary": None if mem.summary is None else asdict(mem.summary),
                              "cudagraph_estimate_gib": mem.cudagraph_estimate, "estimates": None}
    if gpu is not None:
        memory["estimates"] = memlog.estimates(mem, p.args, gpu, p.quantization, available)
    return {"engine": "vllm", "log_release": log.release, "modelled_release": engine.version,
            "launch": launch, "gpu": gpu, "sm": card(gpu).sm,
            "available_kv_gib": available, "state_pages_per_request": p.state_pages_per_request,
            "blocks_per_request": p.blocks_per_request, "checks": checks, "memory": memory,
            "explained": bool(checks) and all(c["match"] for c in checks)}


def _modelled(release: str | None) -> str | None:
    """The log's own release when hybridplan models it (`Initializing a V1 LLM engine (v0.24.0)`), else None (the
    newest)."""
    from hybridplan.engine.vllm.engine import for_version

    if release is None:
        return None
    try:
        return str(for_version(release).version)
    except BadInput:
        return None
