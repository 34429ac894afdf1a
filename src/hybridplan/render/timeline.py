"""The memory timeline (explain with a GPU or a boot log's A and P) as a rich table."""

from __future__ import annotations


from typing import Any

from rich.console import Console
from rich.table import Table


def print_timeline(tl: dict[str, Any], console: Console | None = None) -> None:
    """The memory timeline: each step in GiB with where the number came from."""
    t = Table(title="Memory timeline (one GPU)", show_header=True, header_style="bold")
    t.add_column("step")
    t.add_column("GiB", justify="right")
    t.add_column("from")
    labels = (("capacity_gib", "card memory"), ("visible_gib", "visible to CUDA"), ("context_gib", "CUDA context"),
              ("pre_load_gib", "P  free before load"),
              ("target_weights_gib", "target weights"), ("draft_weights_gib", "draft weights"),
              ("available_gib", "A  free after weights"), ("mem_fraction_static", "--mem-fraction-static"),
              ("slack_gib", "slack P x (1 - mfs)"), ("pre_capture_reserve_gib", "pre-capture reserve"),
              ("mm_reservation_gib", "multimodal reservation"), ("rest_gib", "pool budget (total_rest_memory)"),
              ("pools_gib", "pools as allocated"), ("headroom_gib", "CUDA graphs + activations"),
              ("slack_need_gib", "what the slack must hold"), ("margin_gib", "margin kept free"),
              ("engine_reserve_gib", "engine's default-fraction reserve"),
              ("max_safe_mem_fraction", "highest safe mem fraction"))
    for key, label in labels:
        v = tl.get(key)
        if v is not None:
            value = f"{v['value']:.3f}" if key in ("mem_fraction_static", "max_safe_mem_fraction") else f"{v['value']:.2f}"
            t.add_row(label, value, f"{v['source']}: {v.get('note', '')}")
    (console or Console()).print(t)
