"""When no candidate of `plan --engine vllm` serves the target: the smallest change to the target or the setup that
would, each with the number it reaches, cheapest first (a shorter --max-model-len, fewer requests at once, the
weights quantized online to FP8, more GPUs), each checked by the same fit as the candidates (every startup check of
the release)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from hybridplan.engine.vllm.serving.launch import KVAt, VllmTarget, card_memory
from hybridplan.monotone import largest_true

if TYPE_CHECKING:
    from hybridplan.hardware.catalog import GPU
    from hybridplan.engine.vllm.engine import VllmEngine

# (target, flags, what sizes the pool) -> the fitted candidate row, or None where the release refuses the launch
Fit = Callable[[VllmTarget, list[str], KVAt], "dict[str, Any] | None"]

TP_SIZES = (2, 4, 8)  # tensor-parallel sizes one node offers


def cheapest_changes(engine: "VllmEngine", t: VllmTarget, loosest: list[str], kv_at: KVAt, gpu: "GPU | None",
                     fit: Fit, quantized: str | None) -> list[dict[str, Any]]:
    """The changes that make the loosest candidate (every knob turned) serve the target, cheapest first, each with
    what it reaches; then, where no single change serves it, what each setup change reaches on its own (the most
    requests of the target's length, or the longest length for its requests), so the answer always names a next step.
    `fit`: the plan's own fit; `quantized`: the checkpoint's own quantization, if any."""

    def fits(target: VllmTarget, flags: list[str], at: KVAt) -> dict[str, Any] | None:
        row = fit(target, flags, at)
        return row if row is not None and row["fits"] else None

    setups: list[tuple[str, float, list[str], KVAt]] = [("", 0.0, [], kv_at)]
    given = engine.parse_command(t.command).values
    if t.kv_memory_gib is None and gpu is not None:  # a measured boot prices neither other weights nor other ranks
        quant = given.get("quantization")
        if quant is None and not quantized:
            setups.append(("--quantization fp8 (the weights quantized to FP8 as they load)", 0.3,
                           ["--quantization", "fp8"], card_memory(gpu, "fp8")))
        tp = int(given.get("tensor_parallel_size", 1))
        setups += [(f"--tensor-parallel-size {size} ({size} GPUs)", 1.0 + size / 8, ["--tensor-parallel-size", str(size)],
                    card_memory(gpu, None if quant is None else str(quant))) for size in TP_SIZES if size > tp]
    out: list[dict[str, Any]] = []
    for label, cost, flags, at in setups:
        row = fits(t, [*loosest, *flags], at) if flags else None
        if row is not None:
            out.append({"change": label, "cost": 5.0 + cost, "serves_target": True, "reaches": _reach(t, row)})
            continue
        length = largest_true(1, t.request_length - 1,
                              lambda n: fits(replace(t, request_length=n), [*loosest, *flags], at) is not None)
        conc = largest_true(1, t.concurrency - 1,
                            lambda n: fits(replace(t, concurrency=n), [*loosest, *flags], at) is not None)
        with_ = f"{label}, with " if label else ""
        if length >= 1:
            out.append({"change": f"{with_}--max-model-len {length}", "cost": 5.0 + cost + 0.5, "serves_target": False,
                        "reaches": f"{t.concurrency} request(s) of {length:,} tokens (from {t.request_length:,})"})
        if conc >= 1:
            out.append({"change": f"{with_}{conc} request(s) at once (from {t.concurrency})", "cost": 5.0 + cost + 0.6,
                        "serves_target": False, "reaches": f"{conc} request(s) of {t.request_length:,} tokens"})
    return sorted(out, key=lambda d: (not d["serves_target"], d["cost"]))


def _reach(t: VllmTarget, row: dict[str, Any]) -> str:
    return (f"{t.concurrency} request(s) of {t.request_length:,} tokens at gpu_memory_utilization "
            f"{row['gpu_memory_utilization']:g} ({row['max_concurrency']:.2f} the pool holds)")
