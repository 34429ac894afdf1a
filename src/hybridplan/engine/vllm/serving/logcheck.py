"""A vLLM boot log held against hybridplan's vLLM model: the launch (its `non-default args: {...}` line, or the
command given), the logged `Available KV cache memory`, and what vLLM then logged (the hybrid block size, the KV
capacity and the concurrency), each predicted or the rule that differs named."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, cast

from hybridplan.engine import numbers
from hybridplan.engine.numbers import Bound
from hybridplan.engine.vllm.command import ARGS_MARKER, args_line
from hybridplan.engine.vllm.failures import Failure, failure
from hybridplan.errors import BadInput
from hybridplan.engine.vllm.serving import memory_log as memlog
from hybridplan.limits import MAX_CONTEXT, MAX_GPU_GIB
from hybridplan.engine.vllm.serving.memory_log import GIB, ROUNDING

if TYPE_CHECKING:
    from hybridplan.engine.vllm.planning import VllmArgs

# each pattern: the line's own words, then a number's text (at most one character past numbers.MAX_NUMBER_CHARS, so
# an overlong one is read and refused by name); bounded repeats only, so a search is linear in the log's size
_WORD = r"(\S{1,41})"
_AVAILABLE = re.compile(r"Available KV cache memory: " + _WORD)
_TOKENS = re.compile(r"GPU KV cache size: " + _WORD)
_CONCURRENCY = re.compile(r"Maximum concurrency for " + _WORD + r"(?: tokens per request: " + _WORD + ")?")
_BLOCK = re.compile(r"Setting attention block size to " + _WORD)
_PADDING = re.compile(r"Padding mamba page size by " + _WORD)
_RELEASE = re.compile(r"LLM engine \(v([0-9][^)\s]{0,63})\)")
_GIB = Bound(0.0, MAX_GPU_GIB, "GiB on one GPU")
_POOL_TOKENS = Bound(0, 1 << 40, "tokens one GPU's KV cache holds")
_LENGTH = Bound(1, MAX_CONTEXT, "tokens in one context")
_TIMES = Bound(0.0, 1e12, "requests of that length at once")
_PERCENT = Bound(0.0, 1e6, "a percentage")


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


def _read(m: re.Match[str] | None, group: int, field: str, bound: Bound, *, integer: bool,
          unit: str = "") -> int | float | None:
    """A matched number through the one bounded reader (its unit suffix, `x` or `%`, dropped)."""
    if m is None or m.group(group) is None:
        return None
    text = m.group(group)
    return numbers.read(text.removesuffix(unit) if unit else text, field, bound, integer=integer)


def parse_vllm_log(text: str) -> VllmLog:
    """The boot log's capacity lines (vllm/v1/worker/gpu_worker.py, v1/core/kv_cache_utils.py::
    update_kv_cache_capacity, platforms/interface.py::_align_hybrid_block_size, the API server's args line); every
    number read by engine/numbers.py (BadInput names the line's field)."""
    avail = [numbers.read(m.group(1), "Available KV cache memory", _GIB, integer=False)
             for m in _AVAILABLE.finditer(text)]
    conc = _CONCURRENCY.search(text)
    if conc is not None and conc.group(2) is None:
        _read(conc, 1, "Maximum concurrency for ... tokens", _LENGTH, integer=True)  # an overlong length is named
        raise BadInput("Maximum concurrency line: no `tokens per request: N x` after the length")
    padding = _PADDING.search(text)
    _read(padding, 1, "Padding mamba page size by", _PERCENT, integer=False, unit="%")  # kept as logged: %.2f
    release = _RELEASE.search(text)
    args = args_line(text)
    return VllmLog(available_kv_gib=min(avail) if avail else None,
                   kv_cache_tokens=cast("int | None", _read(_TOKENS.search(text), 1, "GPU KV cache size",
                                                            _POOL_TOKENS, integer=True)),
                   max_model_len=cast("int | None", _read(conc, 1, "Maximum concurrency for ... tokens", _LENGTH,
                                                          integer=True)),
                   max_concurrency=_read(conc, 2, "Maximum concurrency ... per request", _TIMES, integer=False,
                                         unit="x"),
                   block_size=cast("int | None", _read(_BLOCK.search(text), 1, "Setting attention block size to",
                                                       _LENGTH, integer=True)),
                   padding_pct=padding.group(1).removesuffix("%") if padding else None,
                   non_default_args=None if args is None else ARGS_MARKER + args,
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


# the lines a check compares (the launch may be given instead of the `non-default args:` line)
NEEDED = (("available", "`Available KV cache memory: X GiB` (or the startup memory summary)"),
          ("kv_cache_tokens", "`GPU KV cache size: N tokens`"),
          ("max_concurrency", "`Maximum concurrency for L tokens per request: Nx`"))
# the line the API server writes once the engine has started (entrypoints' `Starting vLLM server on %s`; older
# releases: `Starting vLLM API server`): the boot served
SERVING = ("Starting vLLM server on ", "Starting vLLM API server")
# lines only a vLLM server writes (any one of them makes a text a vLLM boot log)
OWN_LINES = (ARGS_MARKER, "Available KV cache memory: ", "GPU KV cache size: ", "Maximum concurrency for ",
             "LLM engine (v", "Model loading took ", "Free memory on device (")


def missing(log: VllmLog, mem: memlog.MemoryLog, failed: bool) -> list[str]:
    """The lines a check needs that the log lacks; none when a failure says where the boot stopped."""
    if failed:
        return []
    found = {"available": log.available_kv_gib is not None or mem.summary is not None,
             "kv_cache_tokens": log.kv_cache_tokens is not None, "max_concurrency": log.max_concurrency is not None}
    return [line for key, line in NEEDED if not found[key]]


def read_log(text: str, name: str = "log") -> tuple[VllmLog, memlog.MemoryLog, Failure | None]:
    """The log's capacity lines, memory lines and root error; BadInput when it holds none of them."""
    log, mem, failed = parse_vllm_log(text), memlog.parse_memory(text), failure(text)
    if failed is None and mem.model_loading is None and mem.summary is None and mem.cudagraph_estimate is None \
            and all(v is None for v in asdict(log).values()):
        raise BadInput(f"{name}: none of the lines vLLM writes at startup was found (a check needs the launch's "
                       f"`non-default args: {{...}}` or the command, and {'; '.join(line for _, line in NEEDED)}): "
                       "not a vLLM boot log?")
    return log, mem, failed


def check_vllm_log(text: str, command_text: str | None, *, gpu: str | None = None,
                   version: str | None = None, name: str = "log") -> dict[str, Any]:
    """Predicted vs logged for each number the log states; `explained` when at least one was compared and every
    one matches (a log cut before its KV lines, or one that failed first, compares none: `missing`, `failure`)."""
    log, mem, failed = read_log(text, name)
    launch = command_text or log.non_default_args
    if launch is None:
        raise BadInput("the log has no `non-default args: {...}` line: give the launch command after `--`")
    # the startup summary's `Current kv cache memory in use` is the same figure (available_kv_cache_memory_bytes)
    available = log.available_kv_gib if log.available_kv_gib is not None else \
        (mem.summary.kv_in_use if mem.summary is not None else None)
    from hybridplan.engine.vllm.engine import for_version
    from hybridplan.engine.vllm.serving.launch import card

    engine = for_version(version or _modelled(log.release))
    checks: list[dict[str, Any]] = []
    memory: dict[str, Any] = {"model_loading_gib": mem.model_loading,
                              "summary": None if mem.summary is None else asdict(mem.summary),
                              "cudagraph_estimate_gib": mem.cudagraph_estimate, "estimates": None}
    p = None
    if available is None:
        engine.parse_command(launch)  # the launch is still held to the release's parser
    else:
        p = predict(launch, available, gpu, engine.version)
        checks = _capacity_checks(log, p, engine.provenance())
        if gpu is not None:
            memory["estimates"] = memlog.estimates(mem, p.args, gpu, p.quantization, available)
    checks += memlog.exact_checks(mem)
    verdict, no_verdict = None, None
    if available is not None or gpu is not None:
        verdict, no_verdict = _verdict(launch, engine.version, available, gpu)
        if verdict is not None and (failed is not None or any(line in text for line in SERVING)):
            checks += _outcome_checks(verdict, failed, available is not None)  # the log shows how the boot ended
    # a log from a build no release is (a dev or rc build, an older or newer release): how it is modelled
    note = {} if version is not None or engine.note is None else {"release_note": engine.note}
    return {"engine": "vllm", "log_release": log.release, "modelled_release": engine.version, **note,
            "launch": launch, "gpu": gpu, "sm": card(gpu).sm, "available_kv_gib": available,
            "state_pages_per_request": None if p is None else p.state_pages_per_request,
            "blocks_per_request": None if p is None else p.blocks_per_request, "checks": checks, "memory": memory,
            "verdict": verdict, "no_verdict": no_verdict, "failure": None if failed is None else failed.as_dict(),
            "missing": missing(log, mem, failed is not None),
            "compared": len(checks), "explained": bool(checks) and all(c["match"] for c in checks)}


def _capacity_checks(log: VllmLog, p: Prediction, rules: dict[str, str]) -> list[dict[str, Any]]:
    """Each capacity figure the log states against the prediction (the rule named where they differ)."""
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
    return [{"quantity": q, "predicted": pred, "logged": got, "match": ok} | ({} if ok else {"rule": rules[q]})
            for q, pred, got, ok in rows]


def _verdict(launch: str, version: str, available: float | None,
             gpu: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """explain's verdict on the launch, on the memory the log states (else the card alone): a refusal while the
    launch resolves is its config check. None, and why, where the launch cannot be sized (a local checkpoint path the
    catalog does not know): the log's own lines are still checked."""
    from hybridplan.errors import EngineRefusal
    from hybridplan.engine.vllm.serving.explain import explain_vllm

    try:
        verdict: dict[str, Any] = explain_vllm(launch, version=version, kv_memory_gib=available, gpu=gpu)["verdict"]
    except EngineRefusal as exc:
        return {"serves": False, "phase": "config", "why": f"vLLM refuses to start: {exc.message}",
                "message": exc.message, "rule": exc.rule}, None
    except BadInput as exc:
        return None, f"no verdict: {exc.message}"
    return verdict, None


def _template(message: str) -> str:
    """A refusal's words without its numbers (the log's block count may differ from the model's and still be the
    same check)."""
    return re.sub(r"\d[\d.,]*", "N", message)[:48]


# the Mamba-block refusal's count, as config/compilation.py::resolve_cudagraph_mode_and_sizes prints it
_BLOCKS = re.compile(r"exceeds available Mamba cache blocks \((\d{1,12})\)")


def _outcome_checks(verdict: dict[str, Any], failed: Failure | None, logged_memory: bool) -> list[dict[str, Any]]:
    """The verdict against the log's outcome, and the block count a Mamba-block refusal printed against the model's
    (from the log's own KV memory where it states it, else from the card alone)."""
    rows = [_outcome(verdict, failed)]
    logged = _BLOCKS.search(failed.message) if failed is not None else None
    if logged is not None and verdict.get("num_blocks") is not None:
        ok = int(logged.group(1)) == verdict["num_blocks"]
        rows.append({"quantity": "num_blocks", "predicted": verdict["num_blocks"], "logged": int(logged.group(1)),
                     "match": ok} | ({} if ok else {"rule": "v1/core/kv_cache_utils.py::get_kv_cache_configs on " + (
                         "the log's available KV memory" if logged_memory else
                         "the card-alone memory estimate (the log states no 'Available KV cache memory')")}))
    return rows


def _outcome(verdict: dict[str, Any], failed: Failure | None) -> dict[str, Any]:
    """The verdict against the log's outcome: it served (the API server started), or it stopped with the root error
    the verdict names (the same check: its message's words)."""
    predicted = "serves" if verdict["serves"] else f"fails ({verdict['phase']})"
    if failed is None:
        return {"quantity": "outcome", "predicted": predicted, "logged": "serves", "match": verdict["serves"]} | (
            {} if verdict["serves"] else {"rule": verdict.get("rule") or verdict["why"]})
    same = not verdict["serves"] and verdict.get("message") is not None \
        and _template(verdict["message"]) in _template(failed.message)
    return {"quantity": "outcome", "predicted": predicted + (f": {verdict['message']}" if verdict.get("message") else ""),
            "logged": f"{failed.type}: {failed.message}", "match": same} | (
        {} if same else {"rule": verdict.get("rule") or "the root error is not the check the verdict stops at"})


def _modelled(release: str | None) -> str | None:
    """The version the log names (`Initializing a V1 LLM engine (v0.24.0)`, `(v0.29.1rc1.dev339+g...)`), which the
    engine resolves to a modelled release (engine/vllm/versions.py), or None (the default) when it names none."""
    from hybridplan.engine.vllm.engine import for_version

    if release is None:
        return None
    try:
        for_version(release)
    except BadInput:
        return None
    return release
