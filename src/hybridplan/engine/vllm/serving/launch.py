"""A vLLM launch on a card: what vLLM reads of the card, the launch resolved on it (its --max-model-len held to the
limit the model's config derives), the target a plan answers, and what sizes the pool at a utilization (a measured
boot's logged memory, or the card alone)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from hybridplan.engine.vllm.serving.memory import GIB
from hybridplan.engine.vllm.serving.verdict import Memory

if TYPE_CHECKING:
    from hybridplan.hardware.catalog import GPU
    from hybridplan.engine.vllm.command import VllmCommand
    from hybridplan.engine.vllm.engine import VllmEngine
    from hybridplan.engine.vllm.planning import VllmArgs
    from hybridplan.models.geometry import ModelGeometry


UNKNOWN_SM = 90  # a card whose compute capability is not known is taken as an sm90 card


@dataclass(frozen=True, kw_only=True)
class Card:
    """What vLLM reads of the card: compute capability x10, torch's total memory (its init snapshot), the name."""

    sm: int | None = UNKNOWN_SM
    total_memory_bytes: int | None = None
    name: str = ""
    cuda_runtime_major: int = 12  # the CUDA runtime vLLM was built for (13+: FlashInfer GDN prefill on Blackwell)


def card(gpu: str | None, cuda_runtime_major: int = 12, memory_gib: float | None = None) -> Card:
    """A catalog GPU as vLLM sees it (`memory_gib` overrides its memory; alone, a card known only by its memory,
    whose kernels are taken as an sm90 card's; neither: an sm90 card of unknown memory)."""
    g = on_card(gpu, memory_gib)
    if g is None:
        return Card(cuda_runtime_major=cuda_runtime_major)
    mib = g.torch_total_mib if g.torch_total_known and g.torch_total_mib is not None else g.memory_mib
    return Card(sm=UNKNOWN_SM if g.generic else g.sm, total_memory_bytes=mib << 20, name=g.name,
                cuda_runtime_major=cuda_runtime_major)


def on_card(gpu: str | None, memory_gib: float | None) -> "GPU | None":
    """The card the options name (--gpu, --gpu-memory-gib over its memory or alone), None for neither."""
    if gpu is None and memory_gib is None:
        return None
    from hybridplan.hardware.catalog import from_options

    return from_options(gpu, memory_gib)


def resolve_on(engine: "VllmEngine", cmd: "VllmCommand", geo: "ModelGeometry", c: Card) -> "VllmArgs":
    """The engine's resolution of `cmd` on card `c`, its --max-model-len held to the limit the model's config
    derives (a longer one is refused with vLLM's message)."""
    from hybridplan.engine.vllm.startup import model_length
    from hybridplan.models.config_json import text_config
    from hybridplan.models.loader import resolve_config

    src = resolve_config(str(cmd.values.get("model") or geo.source))
    limit = model_length(text_config(src.config, src.origin).data)
    return engine.resolve(cmd, geo, c.sm, c.total_memory_bytes, c.name, c.cuda_runtime_major, limit)


@dataclass(frozen=True, kw_only=True)
class VllmTarget:
    """The launch, the boot that measured it, the card and the workload."""

    command: str
    kv_memory_gib: float | None  # the boot's logged available KV memory at its own utilization (None: no boot)
    card: Card
    request_length: int
    concurrency: int
    max_util: float  # the highest gpu_memory_utilization a candidate may ask for


KVAt = Callable[[Any, float], Memory]  # (resolved args, utilization) -> what sizes the pool there


def measured_memory(t: VllmTarget, u0: float, kv_gib: float) -> KVAt:
    """Available KV memory at utilization u, from the boot measured at u0 (its low rounding end)."""
    total = t.card.total_memory_bytes or 0
    return lambda _args, u: Memory(available=int((kv_gib - 0.005) * GIB) + math.ceil(total * u)
                                   - math.ceil(total * u0), measured=u == u0)


def card_memory(g: "GPU", quantization: str | None) -> KVAt:
    """Available KV memory at utilization u estimated from the card alone (engine/vllm/serving/memory.py), with the
    timeline the free-memory and weights checks read (<= 0: nothing left for cache blocks, which vLLM refuses)."""
    from hybridplan.engine.vllm.serving.memory import from_card, host_growth

    def at(args: Any, u: float) -> Memory:
        tl = from_card(replace(args, gpu_memory_utilization=u), g, quantization)
        return Memory(available=int(tl.available.value), timeline=tl, unified=g.unified, generic=g.generic,
                      host_growth=host_growth() if g.unified else None)
    return at
