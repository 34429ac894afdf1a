"""vLLM's side of `compare`: its launch at the release's defaults, explained on the available KV memory or the card,
and why it serves what it serves (attention and state pages in one pool)."""

from __future__ import annotations

from hybridplan.engine.release import ServingEngine
from hybridplan.engine.requests import CompareLeg, CompareRequest


def leg(engine: ServingEngine, req: CompareRequest) -> CompareLeg:
    """Explain the compare launch (on `memory_gib` as the available KV memory, else the card alone) and summarise."""
    from hybridplan.engine.vllm.serving.explain import explain_vllm

    command = engine.compare_launch(req)
    v = explain_vllm(command, version=engine.version, kv_memory_gib=req.memory_gib, gpu=req.gpu)
    length = req.request_length
    requests = int(v["max_concurrency"])
    if v["resolved"]["max_num_seqs"] is not None:
        requests = min(requests, v["resolved"]["max_num_seqs"])
    state = v["state_pages_per_request"] * v["bytes_per_block"]  # a state group's block: one page a layer
    memory = v["memory"]
    util = v["resolved"]["gpu_memory_utilization"]
    source = ("given (--memory-gib)" if memory is None or memory.get("source") != "card" else
              f"the card's memory timeline at gpu_memory_utilization {util:g}, as determine_available_memory takes it")
    gib = v["available_kv_memory_bytes"] / 2**30
    return CompareLeg(
        leg={"version": v["engine"]["version"], "command": command, "cache_memory_gib": gib, "memory_source": source,
             "kv_tokens": v["kv_cache_tokens"], "max_concurrency": v["max_concurrency"], "requests_at_length": requests,
             "mamba_cache_mode": v["resolved"]["mamba_cache_mode"], "block_size": v["block_size"],
             "state_pages_per_request": v["state_pages_per_request"], "blocks_per_request": v["blocks_per_request"],
             "bytes_per_block": v["bytes_per_block"], "state_bytes_per_request": state,
             "max_num_seqs": v["resolved"]["max_num_seqs"]},
        cache_memory_gib=gib, pools="its one pool", memory_source=source,
        why=(f"vllm pages both into one pool: the attention block is {v['block_size']:,} tokens so that its page covers "
             f"a state page; a request at {length:,} tokens takes {v['blocks_per_request']} blocks, "
             f"{v['state_pages_per_request']} of them state pages ({v['resolved']['mamba_cache_mode']} mode), so the "
             f"logged {v['kv_cache_tokens']:,} tokens are {v['max_concurrency']:.2f} requests of that length"),
        request_bytes=v["blocks_per_request"] * v["bytes_per_block"], state_bytes=state, state_words="state pages")
