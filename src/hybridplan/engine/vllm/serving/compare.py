"""vLLM's side of `compare`: what a vLLM launch states in the settings every engine shares, the launch compare runs
on vLLM (the user's own, or one carried over from another engine's settings, saying what it carried, added or could
not carry), explained on the available KV memory or the card alone, and why it serves what it serves (attention and
state pages in one pool); where it does not serve, its verdict and the cheapest change that would."""

from __future__ import annotations

import json
import shlex
from typing import Any

from hybridplan.engine.release import ServingEngine
from hybridplan.engine.requests import (CompareLaunch, CompareLeg, CompareRequest, LaunchSettings, PlanRequest,
                                        Speculative, own_launch, shared_settings)
from hybridplan.errors import BadInput, EngineRefusal

# --kv-cache-dtype: vLLM's spelling -> the shared name, and back
_KV_IN = {"auto": "auto", "fp8": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8_e5m2", "bfloat16": "bfloat16",
          "float16": "float16"}
_KV_OUT = {"auto": "auto", "fp8": "fp8", "fp8_e5m2": "fp8_e5m2", "bfloat16": "bfloat16", "float16": "float16"}
_MTP = ("mtp", "qwen3_next_mtp", "qwen3_5_mtp")  # --speculative-config methods that run the checkpoint's MTP block
_STATE_DTYPES = ("bfloat16", "float16", "float32")  # --mamba-ssm-cache-dtype's choices besides auto
_QUANT_SHARED = ("fp8",)  # online quantization both engines size alike (the weights quantized as they load)
_SHARED = frozenset({"model", "tensor_parallel_size", "max_model_len", "kv_cache_dtype", "mamba_ssm_cache_dtype",
                     "quantization", "speculative_config", "max_num_seqs", "max_num_batched_tokens",
                     "enable_prefix_caching"})
_OWN_WHY = {
    "gpu_memory_utilization": "the share of the whole card vLLM takes: another engine sizes by its own measure and "
                              "keeps its default",
    "mamba_cache_mode": "how vLLM's prefix caching keeps state pages: another engine keeps its own mode",
    "block_size": "vLLM's paged block: another engine pages its own way",
}
_OWN_DEFAULT = "a vLLM setting with no shared counterpart: another engine keeps its default"


def settings(engine: ServingEngine, command: str) -> LaunchSettings:
    """What a vLLM launch (one line) states in the shared settings (by the release's own parser), and its own
    flags."""
    from hybridplan.engine.vllm.engine import for_version

    release = for_version(engine.version)
    v = release.parse_command(command).values
    reg = release.registry()
    if not v.get("model"):
        raise BadInput("the vLLM command names no model (`vllm serve MODEL` or --model)")
    own = tuple((_typed(reg.option_for(d), v[d]), _OWN_WHY.get(d, _OWN_DEFAULT)) for d in v if d not in _SHARED)
    kv = str(v.get("kv_cache_dtype", "auto"))
    if kv not in _KV_IN:
        own += ((f"--kv-cache-dtype {kv}", "a KV cache dtype no other engine shares"),)
    quant = v.get("quantization")
    if quant is not None and quant not in _QUANT_SHARED:
        own += ((f"--quantization {quant}", "an online quantization other engines are not modelled with alike"),)
    length = v.get("max_model_len")
    state = str(v.get("mamba_ssm_cache_dtype", "auto"))
    seqs, batched = v.get("max_num_seqs"), v.get("max_num_batched_tokens")
    return LaunchSettings(
        model=str(v["model"]), tp=int(v.get("tensor_parallel_size", 1)),
        context_length=None if length is None or int(length) == -1 else int(length),
        kv_cache_dtype=_KV_IN.get(kv, "auto"), state_dtype=None if state == "auto" else state,
        quantization=quant if quant in _QUANT_SHARED else None, speculative=_speculative_in(v.get("speculative_config")),
        max_running_requests=None if seqs is None else int(seqs),
        prefill_chunk=None if batched is None else int(batched),
        prefix_caching=None if v.get("enable_prefix_caching") is None else bool(v["enable_prefix_caching"]), own=own)


def _typed(option: str, value: Any) -> str:
    """A flag as the user typed it (a switch alone, a JSON value as JSON)."""
    if value is True:
        return option
    return f"{option} {json.dumps(value) if isinstance(value, (dict, list)) else value}"


def _speculative_in(spec: Any) -> Speculative | None:
    """--speculative-config as the shared method (the MTP methods are one)."""
    if not isinstance(spec, dict) or not spec.get("method"):
        return None
    method = str(spec["method"])
    n = spec.get("num_speculative_tokens")
    return Speculative(method="mtp" if method in _MTP else method, draft=spec.get("model"),
                       tokens=n if isinstance(n, int) else None)


def compare_launch(engine: ServingEngine, req: CompareRequest) -> CompareLaunch:
    """The user's own vLLM launch as typed, else one carried over from the shared settings (the model at the
    context length, TP and KV dtype, and whatever else the settings state)."""
    from hybridplan.engine.vllm.engine import for_version

    own = own_launch(req, engine.name)
    if own is not None:
        return own
    s = shared_settings(req)
    added, dropped = [], []
    dropped += [f"{flag}: {why}" for flag, why in s.own]
    length = s.context_length
    if length is None:
        length = req.request_length
        added.append(f"--max-model-len {length}: the launch states no context length, and vLLM must fit one request "
                     "of max_model_len at startup; compare's request length")
    argv = ["vllm", "serve", s.model, "--max-model-len", str(length), "-tp", str(s.tp)]
    if s.kv_cache_dtype != "auto":
        if s.kv_cache_dtype in _KV_OUT:
            argv += ["--kv-cache-dtype", _KV_OUT[s.kv_cache_dtype]]
        else:
            dropped.append(f"KV cache dtype {s.kv_cache_dtype}: vLLM has no such --kv-cache-dtype")
    if s.state_dtype is not None:
        if s.state_dtype in _STATE_DTYPES:
            argv += ["--mamba-ssm-cache-dtype", s.state_dtype]
        else:
            dropped.append(f"state dtype {s.state_dtype}: vLLM has no such --mamba-ssm-cache-dtype")
    if s.quantization is not None:
        if s.quantization in _QUANT_SHARED:
            argv += ["--quantization", s.quantization]
        else:
            dropped.append(f"--quantization {s.quantization}: vLLM is not modelled with it alike (the checkpoint's "
                           "own quantization still applies)")
    if s.max_running_requests is not None:
        argv += ["--max-num-seqs", str(s.max_running_requests)]
    if s.prefill_chunk is not None:
        argv += ["--max-num-batched-tokens", str(s.prefill_chunk)]
    if s.prefix_caching is False:
        argv += [for_version(engine.version).prefix_caching_off]
    if s.speculative is not None:
        if s.speculative.method == "mtp":
            argv += ["--speculative-config",
                     json.dumps({"method": "mtp", "num_speculative_tokens": s.speculative.tokens or 1})]
        else:
            dropped.append(f"speculative decoding ({s.speculative.method}"
                           + (f", draft {s.speculative.draft}" if s.speculative.draft else "")
                           + "): vLLM is modelled with the checkpoint's own MTP block only")
    carried = [] if req.command is None else _flags(argv[3:])
    return CompareLaunch(command=shlex.join(argv), carried=tuple(carried), added=tuple(added),
                         not_carried=tuple(dropped))


def _flags(argv: list[str]) -> list[str]:
    """The flags of a launch, one entry each with its value."""
    out: list[str] = []
    for tok in argv:
        if tok.startswith("-"):
            out.append(tok)
        elif out:
            out[-1] += f" {tok}"
    return out


def leg(engine: ServingEngine, req: CompareRequest) -> CompareLeg:
    """Explain the compare launch (on `memory_gib` as the available KV memory, else the card alone), its verdict
    and, where it does not serve on the card, the cheapest change (vLLM's plan for one request of the length)."""
    from hybridplan.engine.vllm.serving.explain import explain_vllm

    run = compare_launch(engine, req)
    head: dict[str, Any] = {"version": engine.version, "command": run.command}
    if req.command is not None:
        head["launch"] = run.as_dict(req.launch_engine if req.launch_engine != engine.name else None)
    try:
        v = explain_vllm(run.command, version=engine.version, kv_memory_gib=req.memory_gib, gpu=req.gpu,
                         gpu_memory_gib=req.gpu_memory_gib, evidence=req.evidence)
    except EngineRefusal as exc:  # refused while resolving the launch (the model length, a value)
        v = {"error": exc.as_dict(), "verdict": {
            "serves": False, "phase": "config", "why": f"vLLM refuses to start: {exc.message}",
            "message": exc.message, "rule": exc.rule, "confidence": None}}
    verdict = v.get("verdict")
    serves = None if verdict is None else bool(verdict["serves"])
    on_card = req.memory_gib is None and (req.gpu is not None or req.gpu_memory_gib is not None)
    answer = {"verdict": verdict, "error": v.get("error"),
              "cheapest_change": _cheapest(engine, req, run.command) if serves is False and on_card else None}
    memory = v.get("memory")
    util = (v.get("resolved") or {}).get("gpu_memory_utilization")
    source = ("given (--memory-gib)" if memory is None or memory.get("source") != "card" else
              f"the card's memory timeline at gpu_memory_utilization {util:g}, as determine_available_memory takes it")
    if v.get("num_blocks") is None:  # refused before its blocks were planned: no numbers to compare
        gib = None if v.get("available_kv_memory_bytes") is None else v["available_kv_memory_bytes"] / 2**30
        stops = verdict["why"] if verdict else f"refuses to start: {v['error']['message']}"
        return CompareLeg(leg=head | _empty(gib, source if gib is not None else None) | answer,
                          cache_memory_gib=gib, pools="its one pool", memory_source=source,
                          why=f"vllm fails ({verdict['phase'] if verdict else 'startup'}): {stops}",
                          request_bytes=None, state_bytes=None, state_words="state pages", serves=serves)
    length = req.request_length
    blocks, state_pages = _at_length(engine, run.command, req, v, length)
    concurrency = v["num_blocks"] / blocks
    requests = int(concurrency)
    if v["resolved"]["max_num_seqs"] is not None:
        requests = min(requests, v["resolved"]["max_num_seqs"])
    state = state_pages * v["bytes_per_block"]  # a state group's block: one page a layer
    gib = v["available_kv_memory_bytes"] / 2**30
    refused = "" if verdict is None or verdict["serves"] else \
        f"; on the card it fails ({verdict['phase']}): {verdict['why']}"
    return CompareLeg(
        leg=head | {"cache_memory_gib": gib, "memory_source": source,
                    "kv_tokens": v["kv_cache_tokens"], "max_concurrency": v["max_concurrency"],
                    "requests_at_length": requests, "mamba_cache_mode": v["resolved"]["mamba_cache_mode"],
                    "block_size": v["block_size"], "state_pages_per_request": state_pages,
                    "blocks_per_request": blocks, "bytes_per_block": v["bytes_per_block"],
                    "state_bytes_per_request": state, "max_num_seqs": v["resolved"]["max_num_seqs"]} | answer,
        cache_memory_gib=gib, pools="its one pool", memory_source=source,
        why=(f"vllm pages both into one pool: the attention block is {v['block_size']:,} tokens so that its page covers "
             f"a state page; a request at {length:,} tokens takes {blocks} blocks, "
             f"{state_pages} of them state pages ({v['resolved']['mamba_cache_mode']} mode), so the "
             f"logged {v['kv_cache_tokens']:,} tokens are {concurrency:.2f} requests of that length" + refused),
        request_bytes=blocks * v["bytes_per_block"], state_bytes=state, state_words="state pages", serves=serves)


def _empty(gib: float | None, source: str | None) -> dict[str, Any]:
    """The numbers of a leg that refused before its blocks were planned (the KV memory where it was sized)."""
    return {"cache_memory_gib": gib, "memory_source": source} | dict.fromkeys((
        "kv_tokens", "max_concurrency", "requests_at_length", "mamba_cache_mode", "block_size",
        "state_pages_per_request", "blocks_per_request", "bytes_per_block", "state_bytes_per_request", "max_num_seqs"))


def _at_length(engine: ServingEngine, command: str, req: CompareRequest, v: dict[str, Any],
               length: int) -> tuple[int, int]:
    """(blocks, state pages) one request of `length` tokens takes: the payload's where the launch's max_model_len is
    that length, else the layout's (v1/core/kv_cache_utils.py::_max_memory_usage_bytes_from_groups)."""
    if v["max_model_len"] == length:
        return v["blocks_per_request"], v["state_pages_per_request"]
    from hybridplan.engine.vllm.engine import for_version
    from hybridplan.engine.vllm.serving.launch import card, resolve_on
    from hybridplan.models.loader import load_model

    release = for_version(engine.version)
    cmd = release.parse_command(command)
    geo = load_model(str(cmd.values["model"]))
    lay = release.layout(resolve_on(release, cmd, geo, card(req.gpu, memory_gib=req.gpu_memory_gib)), geo)
    groups = lay.group_plans(length)
    return sum(g.blocks_per_request for g in groups), sum(g.blocks_per_request for g in groups if g.kind == "mamba")


def _cheapest(engine: ServingEngine, req: CompareRequest, command: str) -> dict[str, Any] | None:
    """The fewest changes vLLM's plan makes for one request of the length on the card, as a change, the command it
    gives and what it reaches; where nothing serves, the cheapest change that would (the plan's own)."""
    try:
        p = engine.plan(PlanRequest(request_length=req.request_length, concurrency=1, command=command, gpu=req.gpu,
                                    gpu_memory_gib=req.gpu_memory_gib))
    except (BadInput, EngineRefusal) as exc:
        return {"change": None, "command": None, "serves": False, "reaches": None, "why": exc.message}
    best = p["best"]
    if best is not None:
        return {"change": " ".join(f"{k} {val}".strip() for k, val in best["changes"].items()) or None,
                "command": p["command"], "serves": True,
                "reaches": (f"{best['max_concurrency']:.2f} request(s) of {req.request_length:,} tokens at "
                            f"gpu_memory_utilization {best['gpu_memory_utilization']:g}"),
                "why": "; ".join(f"{k}: {w}" for k, w in best["why"].items())}
    cheapest = p.get("cheapest_change") or {}
    return {"change": cheapest.get("change"), "command": None, "serves": bool(cheapest.get("serves_target")),
            "reaches": cheapest.get("reaches"), "why": None}
