"""`compare`: one model, one card and one request length on SGLang and on vLLM, side by side.

With `memory_gib` both engines get the same memory for their caches: SGLang's pool budget (total_rest_memory: the
state pool and the KV pool share it) and vLLM's available KV memory (one paged pool of attention pages and state
pages). With a card alone each engine takes what its own memory timeline leaves on that card (SGLang's
--mem-fraction-static default, vLLM's gpu_memory_utilization), so the comparison is the one a user deploying on that
card sees. Each engine runs its own defaults for the rest; the numbers come from the engine models (`explain` for
each).
"""

from __future__ import annotations

import shlex
from typing import Any

from hybridplan.errors import BadInput

_KV = {"auto": ("auto", "auto"), "fp8": ("fp8_e4m3", "fp8")}  # --kv-cache-dtype as (sglang, vllm) spell it


def compare_engines(model: str, *, memory_gib: float | None, request_length: int, tp: int = 1,
                    kv_cache_dtype: str = "auto", gpu: str | None = None,
                    vllm_version: str | None = None) -> dict[str, Any]:
    """What each engine serves at `request_length` tokens from `memory_gib` of cache memory (None: what each engine's
    memory timeline leaves on the card `gpu`), and why they differ (vLLM as `vllm_version` models it, the newest by
    default)."""
    from hybridplan.explain import explain
    from hybridplan.vllm_explain import explain_vllm

    if kv_cache_dtype not in _KV:
        raise BadInput(f"--kv-cache-dtype: {kv_cache_dtype!r} (auto or fp8)")
    from hybridplan.engine.api import releases

    if vllm_version is not None and vllm_version not in releases("vllm"):
        raise BadInput(f"--vllm-version: vLLM {vllm_version} is not modelled ({', '.join(releases('vllm'))})")
    sgl_kv, vllm_kv = _KV[kv_cache_dtype]
    sgl_cmd = ["python", "-m", "sglang.launch_server", "--model-path", model, "--context-length", str(request_length),
               "--tp", str(tp)] + (["--kv-cache-dtype", sgl_kv] if sgl_kv != "auto" else [])
    vllm_cmd = ["vllm", "serve", model, "--max-model-len", str(request_length), "-tp", str(tp)] + \
        (["--kv-cache-dtype", vllm_kv] if vllm_kv != "auto" else [])
    if memory_gib is None and gpu is None:
        raise BadInput("--memory-gib: give the cache memory per rank, or --gpu to size each engine from the card")
    card = None
    if gpu is not None:
        from hybridplan.hardware.catalog import from_options

        card = from_options(gpu, None)
    if memory_gib is None:
        s = explain(shlex.join(sgl_cmd), gpu=card)
    else:
        s = explain(shlex.join(sgl_cmd), budget=memory_gib, platform=card.platform() if card else None)
    if "error" in s:
        raise BadInput(f"sglang: {s['error'].get('message', s['error'])}")
    v = explain_vllm(shlex.join(vllm_cmd), version=vllm_version, kv_memory_gib=memory_gib, gpu=gpu)
    sgl_requests = min(s["max_running_requests"], s["max_total_num_tokens"] // request_length)
    vllm_requests = int(v["max_concurrency"])
    if v["resolved"]["max_num_seqs"] is not None:
        vllm_requests = min(vllm_requests, v["resolved"]["max_num_seqs"])
    sgl_state = s["slots_per_request"] * s["state_bytes_per_slot"]
    vllm_state = v["state_pages_per_request"] * v["bytes_per_block"]  # a state group's block: one page a layer
    return {
        "model": model, "memory_gib": memory_gib, "request_length": request_length, "tp": tp, "gpu": gpu,
        "sglang": {"version": s["engine"]["version"], "command": shlex.join(sgl_cmd),
                   "cache_memory_gib": s["pool_budget_gib"], "memory_source": _sglang_source(s),
                   "kv_tokens": s["max_total_num_tokens"], "state_slots": s["max_mamba_cache_size"],
                   "slots_per_request": s["slots_per_request"], "max_running_requests": s["max_running_requests"],
                   "requests_at_length": sgl_requests, "binding_limit": s["binding_limit"],
                   "state_bytes_per_request": sgl_state,
                   "kv_bytes_per_request": s["kv_bytes_per_token"] * request_length},
        "vllm": {"version": v["engine"]["version"], "command": shlex.join(vllm_cmd),
                 "cache_memory_gib": v["available_kv_memory_bytes"] / 2**30, "memory_source": _vllm_source(v),
                 "kv_tokens": v["kv_cache_tokens"], "max_concurrency": v["max_concurrency"],
                 "requests_at_length": vllm_requests, "mamba_cache_mode": v["resolved"]["mamba_cache_mode"],
                 "block_size": v["block_size"], "state_pages_per_request": v["state_pages_per_request"],
                 "blocks_per_request": v["blocks_per_request"], "bytes_per_block": v["bytes_per_block"],
                 "state_bytes_per_request": vllm_state,
                 "max_num_seqs": v["resolved"]["max_num_seqs"]},
        "why": ([] if memory_gib is not None else _memory_why(s, v, gpu))
        + _why(s, v, request_length, sgl_state, vllm_state),
    }


def _sglang_source(s: dict[str, Any]) -> str:
    """Where SGLang's pool budget came from: the caller's figure or the card's timeline at the default fraction."""
    memory = s.get("memory")
    if memory is None:
        return "given (--memory-gib)"
    frac = memory["timeline"]["mem_fraction_static"]["value"]
    return f"the card's memory timeline at the release's default --mem-fraction-static {frac:.3f} for this card"


def _vllm_source(v: dict[str, Any]) -> str:
    """Where vLLM's available KV memory came from: the caller's figure or the card's timeline."""
    memory = v["memory"]
    if memory is None or memory.get("source") != "card":
        return "given (--memory-gib)"
    util = v["resolved"]["gpu_memory_utilization"]
    return f"the card's memory timeline at gpu_memory_utilization {util:g}, as determine_available_memory takes it"


def _memory_why(s: dict[str, Any], v: dict[str, Any], gpu: str | None) -> list[str]:
    """Why the two engines start from different cache memory on the same card."""
    return [f"on one {gpu} sglang keeps {s['pool_budget_gib']:.2f} GiB for its two pools ({_sglang_source(s)}) and "
            f"vllm {v['available_kv_memory_bytes'] / 2**30:.2f} GiB for its one pool ({_vllm_source(v)})"]


def _why(s: dict[str, Any], v: dict[str, Any], length: int, sgl_state: int, vllm_state: int) -> list[str]:
    """The layout differences behind the two numbers, in each engine's own terms."""
    return [
        f"sglang keeps a fixed state pool of {s['max_mamba_cache_size']} slots beside the KV pool; a request holds "
        f"{s['slots_per_request']} slots ({sgl_state / 2**20:,.1f} MiB of state on one rank) and {length:,} KV tokens "
        f"({s['kv_bytes_per_token'] * length / 2**20:,.1f} MiB); the {s['binding_limit']} binds",
        f"vllm pages both into one pool: the attention block is {v['block_size']:,} tokens so that its page covers a "
        f"state page; a request at {length:,} tokens takes {v['blocks_per_request']} blocks, "
        f"{v['state_pages_per_request']} of them state pages ({v['resolved']['mamba_cache_mode']} mode), so the "
        f"logged {v['kv_cache_tokens']:,} tokens are {v['max_concurrency']:.2f} requests of that length",
        f"per request on one rank: sglang {(sgl_state + s['kv_bytes_per_token'] * length) / 2**20:,.1f} MiB "
        f"({sgl_state / 2**20:,.1f} MiB of it state), vllm {v['blocks_per_request'] * v['bytes_per_block'] / 2**20:,.1f}"
        f" MiB ({vllm_state / 2**20:,.1f} MiB of it state pages)",
    ]
