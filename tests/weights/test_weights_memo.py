"""A checkpoint's inventory answers each layout once and stays bounded in a long-lived process."""

from __future__ import annotations

from hybridplan.provenance import Source
from hybridplan.weights.inventory import MEMO_MAX, Inventory, Parallel, per_rank_bytes, piece


def _inv() -> Inventory:
    pieces = (piece("model.embed_tokens.weight", 1000), piece("model.layers.0.mlp.up_proj.weight", 400),
              piece("model.layers.1.self_attn.q_proj.weight", 200), piece("lm_head.weight", 1000))
    return Inventory(pieces=pieces, source=Source.ESTIMATE, note="test")


def test_per_rank_bytes_are_the_same_remembered_or_not():
    inv = _inv()
    par = Parallel(tp=2, attn_tp=2, num_layers=2)
    first = per_rank_bytes(inv, par, ("target",), [(0, 2)])
    assert first == (1000 + 400 + 200 + 1000) // 2
    assert per_rank_bytes(inv, par, ("target",), [(0, 2)]) == first
    assert per_rank_bytes(inv, par, ("target",), [(0, 1), (1, 2)]) == 1000 // 2 + 400 // 2  # stage 0: embed + layer 0


def test_the_memo_stays_bounded():
    inv = _inv()
    for tp in range(1, 2 * MEMO_MAX):
        per_rank_bytes(inv, Parallel(tp=tp, attn_tp=tp, num_layers=2), ("target",), [(0, 2)])
    assert 0 < len(inv.memo) <= MEMO_MAX


def test_a_rescaled_copy_keeps_the_exact_total_and_is_reused():
    inv = _inv()
    scaled = inv.scaled_to(5200, Source.HEADERS, "index total")
    assert scaled.total() == 5200 and inv.scaled_to(5200, Source.HEADERS, "index total") is scaled
