"""sglang's side of `compare`: what an sglang launch states in the settings every engine shares, the launch compare
runs on sglang (the user's own, or one carried over from another engine's settings, saying what it carried, added
or could not carry), explained on the cache memory or the card, and why it serves what it serves (a fixed state pool
of S-slot requests beside the KV pool); where it does not serve, its verdict and the cheapest change that would."""

from __future__ import annotations

import shlex
from typing import Any

from hybridplan.engine.release import ServingEngine
from hybridplan.engine.requests import (CompareLaunch, CompareLeg, CompareRequest, LaunchSettings, PlanRequest,
                                        Speculative, own_launch, shared_settings)
from hybridplan.errors import BadInput, EngineRefusal

PROGRAM = ["python", "-m", "sglang.launch_server"]
# --kv-cache-dtype: sglang's spelling -> the shared name, and back
_KV_IN = {"auto": "auto", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8_e5m2", "bf16": "bfloat16", "bfloat16": "bfloat16"}
_KV_OUT = {"auto": "auto", "fp8": "fp8_e4m3", "fp8_e5m2": "fp8_e5m2", "bfloat16": "bfloat16"}
# --speculative-algorithm -> the shared method (EAGLE without a draft is the checkpoint's own MTP block)
_SPEC_IN = {"NEXTN": "mtp", "EAGLE": "eagle", "EAGLE3": "eagle3", "DFLASH": "dflash", "DSPARK": "dspark",
            "NGRAM": "ngram"}
_SPEC_OUT = {"mtp": "EAGLE", "eagle": "EAGLE", "eagle3": "EAGLE3", "dflash": "DFLASH", "dspark": "DSPARK",
             "ngram": "NGRAM"}
# the flags the shared settings carry (the rest are sglang's own)
_SHARED = frozenset({"model_path", "tp_size", "context_length", "kv_cache_dtype", "mamba_ssm_dtype", "quantization",
                     "speculative_algorithm", "speculative_draft_model_path", "speculative_num_steps",
                     "speculative_eagle_topk", "speculative_num_draft_tokens", "max_running_requests",
                     "chunked_prefill_size", "disable_radix_cache"})
_OWN_WHY = {
    "mem_fraction_static": "a share of what SGLang's weights leave for its pools: another engine sizes by its own "
                           "measure and keeps its default",
    "mamba_full_memory_ratio": "SGLang's state pool against its KV pool: an engine with one paged pool has no "
                               "such balance",
    "max_mamba_cache_size": "SGLang's fixed state pool: an engine with one paged pool has none to pin",
    "mamba_radix_cache_strategy": "how SGLang's radix cache keeps state: another engine's prefix caching keeps its "
                                  "own mode",
}
_OWN_DEFAULT = "an SGLang setting with no shared counterpart: another engine keeps its default"


def settings(engine: ServingEngine, command: str | tuple[str, ...]) -> LaunchSettings:
    """What an sglang launch states in the shared settings (by the release's own parser), and its own flags."""
    from hybridplan.engine.sglang.releases import for_version
    from hybridplan.engine.sglang.serving.loading import launch

    parsed = for_version(engine.version).parse(launch(command))
    v, spelled = parsed.values, parsed.spelled
    algo = str(v.get("speculative_algorithm") or "").upper()
    draft = v.get("speculative_draft_model_path")
    spec = None
    if algo:
        method = "mtp" if algo == "EAGLE" and not draft else _SPEC_IN.get(algo, algo.lower())
        steps = v.get("speculative_num_steps")
        spec = Speculative(method=method, draft=None if draft is None else str(draft),
                           tokens=None if steps is None else int(steps))
    kv = str(v.get("kv_cache_dtype", "auto"))
    own = tuple((_typed(spelled[d], v[d]), _OWN_WHY.get(d, _OWN_DEFAULT)) for d in v if d not in _SHARED)
    if kv not in _KV_IN:
        own += ((_typed(spelled["kv_cache_dtype"], kv), "a KV cache dtype no other engine shares"),)
    return LaunchSettings(
        model=str(v["model_path"]), tp=int(v.get("tp_size", 1)),
        context_length=None if v.get("context_length") is None else int(v["context_length"]),
        kv_cache_dtype=_KV_IN.get(kv, "auto"), state_dtype=v.get("mamba_ssm_dtype"),
        quantization=v.get("quantization"), speculative=spec,
        max_running_requests=None if v.get("max_running_requests") is None else int(v["max_running_requests"]),
        prefill_chunk=None if v.get("chunked_prefill_size") is None else int(v["chunked_prefill_size"]),
        prefix_caching=False if v.get("disable_radix_cache") else None, own=own)


def _typed(option: str, value: Any) -> str:
    """A flag as the user typed it (a switch alone, a list value space-separated)."""
    if value is True:
        return option
    return f"{option} {' '.join(map(str, value)) if isinstance(value, (list, tuple)) else value}"


def compare_launch(engine: ServingEngine, req: CompareRequest) -> CompareLaunch:
    """The user's own sglang launch as typed, else one carried over from the shared settings (the model at the
    context length, TP and KV dtype, and whatever else the settings state)."""
    own = own_launch(req, engine.name)
    if own is not None:
        return own
    s = shared_settings(req)
    carried, added, dropped = [], [], []
    dropped += [f"{flag}: {why}" for flag, why in s.own]
    length = s.context_length
    if length is None:
        length = req.request_length
        added.append(f"--context-length {length}: the launch states no context length; compare's request length")
    argv = [*PROGRAM, "--model-path", s.model, "--context-length", str(length), "--tp", str(s.tp)]
    if s.kv_cache_dtype != "auto":
        if s.kv_cache_dtype in _KV_OUT:
            argv += ["--kv-cache-dtype", _KV_OUT[s.kv_cache_dtype]]
        else:
            dropped.append(f"KV cache dtype {s.kv_cache_dtype}: SGLang has no such --kv-cache-dtype")
    if s.state_dtype is not None:
        argv += ["--mamba-ssm-dtype", s.state_dtype]
    if s.quantization is not None:
        argv += ["--quantization", s.quantization]
    if s.max_running_requests is not None:
        argv += ["--max-running-requests", str(s.max_running_requests)]
    if s.prefill_chunk is not None:
        argv += ["--chunked-prefill-size", str(s.prefill_chunk)]
    if s.prefix_caching is False:
        argv += ["--disable-radix-cache"]
    if s.speculative is not None:
        argv += _speculative(s.speculative, dropped)
    command = shlex.join(argv)
    if req.command is not None:
        carried = _carried(argv)
    return CompareLaunch(command=command, carried=tuple(carried), added=tuple(added), not_carried=tuple(dropped))


def _speculative(spec: Speculative, dropped: list[str]) -> list[str]:
    """sglang's flags for a shared speculative method (EAGLE with the MTP block's steps, or a draft's algorithm)."""
    algo = _SPEC_OUT.get(spec.method)
    if algo is None or (spec.method not in ("mtp", "ngram") and spec.draft is None):
        dropped.append(f"speculative decoding ({spec.method}): SGLang is not modelled with it"
                       + (" without a draft checkpoint" if algo is not None else ""))
        return []
    out = ["--speculative-algorithm", algo]
    if spec.draft is not None:
        out += ["--speculative-draft-model-path", spec.draft]
    if spec.method == "mtp":
        steps = spec.tokens or 1
        out += ["--speculative-num-steps", str(steps), "--speculative-eagle-topk", "1",
                "--speculative-num-draft-tokens", str(steps + 1)]
    return out


def _carried(argv: list[str]) -> list[str]:
    """The flags a carried-over launch sets, one entry each (the model and the program left out)."""
    flags = argv[len(PROGRAM):]
    out: list[str] = []
    for tok in flags:
        if tok.startswith("--"):
            out.append(tok)
        elif out:
            out[-1] += f" {tok}"
    return [f for f in out if not f.startswith("--model-path ")]


def leg(engine: ServingEngine, req: CompareRequest) -> CompareLeg:
    """Explain the compare launch (on `memory_gib` as the pool budget, else on the card's timeline), its verdict and,
    where it does not serve on the card, the cheapest change (sglang's plan for one request of the length)."""
    from hybridplan.engine.sglang.serving.explain import explain
    from hybridplan.engine.sglang.serving.loading import launch
    from hybridplan.hardware.catalog import from_options

    card = from_options(req.gpu, req.gpu_memory_gib)
    run = compare_launch(engine, req)
    cmd = launch(req.command if req.command is not None and req.launch_engine == engine.name else run.command)
    try:
        if req.memory_gib is None:
            s = explain(cmd, gpu=card, version=engine.version, evidence=req.evidence)
        else:
            s = explain(cmd, budget=req.memory_gib, platform=card.platform() if card else None,
                        version=engine.version)
    except EngineRefusal as exc:
        s = {"engine": {"version": engine.version}, "error": exc.as_dict()}
    head: dict[str, Any] = {"version": s["engine"]["version"], "command": run.command}
    if req.command is not None:
        head["launch"] = run.as_dict(req.launch_engine if req.launch_engine != engine.name else None)
    verdict = _verdict(s)
    serves = None if verdict is None else bool(verdict["serves"])
    fix = _cheapest(engine, req, run.command) if serves is False and card is not None and req.memory_gib is None \
        else None
    answer = {"verdict": verdict, "error": s.get("error"), "cheapest_change": fix}
    if s.get("max_mamba_cache_size") is None:  # refused while sizing its pools: no numbers to compare
        return CompareLeg(leg=head | _empty() | answer, cache_memory_gib=None, pools="its two pools",
                          memory_source=_source(s), why=f"sglang {_stops(verdict, s)}", request_bytes=None,
                          state_bytes=None, state_words="state", serves=serves)
    length = req.request_length
    state = s["slots_per_request"] * s["state_bytes_per_slot"]
    kv = s["kv_bytes_per_token"] * length
    source = _source(s)
    return CompareLeg(
        leg=head | {"cache_memory_gib": s["pool_budget_gib"],
                    "memory_source": source, "kv_tokens": s["max_total_num_tokens"],
                    "state_slots": s["max_mamba_cache_size"], "slots_per_request": s["slots_per_request"],
                    "max_running_requests": s["max_running_requests"],
                    "requests_at_length": min(s["max_running_requests"], s["max_total_num_tokens"] // length),
                    "binding_limit": s["binding_limit"], "state_bytes_per_request": state,
                    "kv_bytes_per_request": kv} | answer,
        cache_memory_gib=s["pool_budget_gib"], pools="its two pools", memory_source=source,
        why=(f"sglang keeps a fixed state pool of {s['max_mamba_cache_size']} slots beside the KV pool; a request holds "
             f"{s['slots_per_request']} slots ({state / 2**20:,.1f} MiB of state on one rank) and {length:,} KV tokens "
             f"({kv / 2**20:,.1f} MiB); the {s['binding_limit']} binds"
             + ("" if serves is not False else f"; on the card it {_stops(verdict, s)}")),
        request_bytes=state + kv, state_bytes=state, state_words="state", serves=serves)


def _empty() -> dict[str, Any]:
    """The numbers of a leg that refused before its pools were sized."""
    return dict.fromkeys(("cache_memory_gib", "memory_source", "kv_tokens", "state_slots", "slots_per_request",
                          "max_running_requests", "requests_at_length", "binding_limit", "state_bytes_per_request",
                          "kv_bytes_per_request"))


def _verdict(s: dict[str, Any]) -> dict[str, Any] | None:
    """The verdict on the card (explain's), else the engine's refusal as one, else None (a budget without a card)."""
    memory = s.get("memory") or {}
    if memory.get("verdict") is not None:
        return dict(memory["verdict"])
    error = s.get("error")
    if error is None:
        return None
    return {"serves": False, "phase": "startup", "why": f"the engine refuses: {error['message']}",
            "message": error["message"], "rule": error.get("rule"), "confidence": None}


def _stops(verdict: dict[str, Any] | None, s: dict[str, Any]) -> str:
    """Where and why the launch stops, in one clause."""
    if verdict is None:
        return f"refuses to start: {s['error']['message']}"
    return f"fails ({verdict['phase']}): {verdict['why']}"


def _cheapest(engine: ServingEngine, req: CompareRequest, command: str) -> dict[str, Any] | None:
    """The fewest changes sglang's plan makes for one request of the length on the card, as a change, the command it
    gives and what it reaches; where nothing serves, the cheapest change that would (the plan's own words)."""
    try:
        p = engine.plan(PlanRequest(request_length=req.request_length, concurrency=1, command=command,
                                    gpu=req.gpu, gpu_memory_gib=req.gpu_memory_gib, measured=req.measured,
                                    evidence=req.evidence))
    except (BadInput, EngineRefusal) as exc:
        return {"change": None, "command": None, "serves": False, "reaches": None, "why": exc.message}
    if p["fits"]:
        change = " ".join(c["flag"] + ("" if c["new"] == "" else " (removed)" if c["new"] is None else f" {c['new']}")
                          for c in p["changes"])
        return {"change": change or None, "command": p["command"], "serves": True,
                "reaches": f"{p['max_running_requests']} request(s) of {req.request_length:,} tokens",
                "why": "; ".join(f"{c['flag']}: {c['why']}" for c in p["changes"] if c.get("why"))}
    return {"change": p.get("cheapest_change"), "command": None, "serves": False, "reaches": None,
            "why": p.get("why")}


def _source(s: dict[str, Any]) -> str:
    """Where the pool budget came from: the caller's figure or the card's timeline at the default fraction."""
    memory = s.get("memory")
    if memory is None:
        return "given (--memory-gib)"
    frac = memory["timeline"]["mem_fraction_static"]["value"]
    if (s.get("args") or {}).get("mem_fraction_static", {}).get("source") == "explicit":
        return f"the card's memory timeline at the launch's --mem-fraction-static {frac:g}"
    return f"the card's memory timeline at the release's default --mem-fraction-static {frac:.3f} for this card"
