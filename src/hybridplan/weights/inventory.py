"""A checkpoint as tensors grouped by module: bytes, which part of the model, and how the engine shards them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from hybridplan.provenance import Source

_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")
_MTP = re.compile(r"(?:^|\.)mtp(?:\.|_)|^model\.mtp|\.nextn\.|^mtp$")
_VISION = ("visual.", "vision_tower", "vision_model", "mm_projector", "multi_modal_projector", "vision_embed",
           "merger.", "patch_embed")


@dataclass(frozen=True, kw_only=True)
class Piece:
    """Bytes of one tensor (or a group of identical ones) and what decides where it lives."""

    name: str  # module or tensor name, HF spelling
    nbytes: int
    part: str  # target | mtp | vision
    layer: int | None  # decoder layer (PP stage placement); None for embeddings, head, vision
    shard: str  # attn (attention TP) | mlp (TP) | expert (EP x MoE-TP) | vocab (TP) | head | kv (KV heads) | replicated


def part_of(name: str) -> str:
    if _MTP.search(name):
        return "mtp"
    if any(tag in name for tag in _VISION):
        return "vision"
    return "target"


def layer_of(name: str) -> int | None:
    m = _LAYER.search(name)
    return int(m.group(1)) if m else None


_KV_PROJ = re.compile(r"(^|\.)(k_proj|v_proj)(\.|$)")
_GATE = re.compile(r"\.(gate|router)(\.weight|\.e_score_correction_bias|$)")


def shard_of(name: str) -> str:
    """How a tensor is split across ranks, from its name (sglang's parallel linear layers)."""
    n = name
    if "embed_tokens" in n or n.endswith("embeddings.weight") or ".embeddings." in n or n.startswith("embed"):
        return "vocab"
    if n.startswith("lm_head") or ".lm_head" in n or "output_layer" in n:
        return "head"
    if ".experts." in n:
        return "expert"
    if _KV_PROJ.search(n) and ("self_attn" in n or "mixer" in n or "attention" in n):
        return "kv"
    if _GATE.search(n) or "shared_expert_gate" in n:
        return "replicated"
    if "norm" in n and "proj" not in n:
        return "replicated"
    if any(t in n for t in ("self_attn.", "linear_attn.", "attention.", "mixer.", "attn.")):
        return "attn"
    if any(t in n for t in ("mlp.", "feed_forward", "shared_expert", "ffn")):
        return "mlp"
    return "replicated"


@lru_cache(maxsize=1 << 16)
def placement(name: str) -> tuple[str, int | None, str]:
    """(part, layer, shard) of a tensor name: the same names recur for every cell of a page, so classify each once."""
    return part_of(name), layer_of(name), shard_of(name)


def piece(name: str, nbytes: int) -> Piece:
    part, layer, shard = placement(name)
    return Piece(name=name, nbytes=nbytes, part=part, layer=layer, shard=shard)


MEMO_MAX = 512


@dataclass(frozen=True, kw_only=True)
class Inventory:
    """All pieces of a checkpoint with where the bytes came from (headers, or an estimate)."""

    pieces: tuple[Piece, ...]
    source: Source
    note: str

    @cached_property
    def memo(self) -> dict[tuple[Any, ...], object]:
        """Answers derived from this (immutable) inventory: per-rank bytes by layout, rescaled copies by total."""
        return {}

    def remember(self, key: tuple[Any, ...], value: object) -> None:
        """Keep an answer; a long-lived process (the web server) keeps at most MEMO_MAX per inventory."""
        if len(self.memo) >= MEMO_MAX:
            self.memo.clear()
        self.memo[key] = value

    def total(self, parts: tuple[str, ...] = ("target", "mtp", "vision")) -> int:
        key = ("total", parts)
        if key not in self.memo:
            self.remember(key, sum(p.nbytes for p in self.pieces if p.part in parts))
        nbytes: int = self.memo[key]  # type: ignore[assignment]
        return nbytes

    def scaled_to(self, total_bytes: int, source: Source, note: str) -> "Inventory":
        """The same split rescaled so the checkpoint total is `total_bytes` (an exact total, an estimated split)."""
        key = ("scaled", total_bytes, source, note)
        if key not in self.memo:
            self.remember(key, self._scaled_to(total_bytes, source, note))
        scaled: Inventory = self.memo[key]  # type: ignore[assignment]
        return scaled

    def _scaled_to(self, total_bytes: int, source: Source, note: str) -> "Inventory":
        have = self.total()
        factor = total_bytes / have if have else 0.0
        sizes = [int(p.nbytes * factor) for p in self.pieces]
        if sizes:  # keep the total exact: the rounding remainder goes to the largest piece
            big = max(range(len(sizes)), key=sizes.__getitem__)
            sizes[big] += total_bytes - sum(sizes)
        pieces = tuple(Piece(name=p.name, nbytes=n, part=p.part, layer=p.layer, shard=p.shard)
                       for p, n in zip(self.pieces, sizes))
        return Inventory(pieces=pieces, source=source, note=note)


@dataclass(frozen=True, kw_only=True)
class Parallel:
    """The parallel widths that shard weights (from the resolved engine arguments)."""

    tp: int = 1
    attn_tp: int = 1
    pp: int = 1
    ep: int = 1
    dp_attention: bool = False  # attention DP: the input embedding is replicated (enable_tp=False)
    dp_lm_head: bool = False
    kv_heads: int = 0  # total KV heads of the full-attention layers (k/v projections replicate past it)
    num_layers: int = 0
    pp_partition: str | None = None


@dataclass(frozen=True, kw_only=True)
class WeightsQuery:
    """What one rank loads, as the engine resolved the launch: the checkpoint and its online quantization, the
    parallel layout and pipeline stages that shard it, and the draft the speculative setup adds. Each engine builds
    it from its own resolved arguments (the weights layer knows no engine)."""

    model: str
    quantization: str | None
    multimodal: bool
    parallel: Parallel
    stages: tuple[tuple[int, int], ...]
    draft: str = "none"  # none | mtp (the checkpoint's own MTP head) | checkpoint (a separate draft at draft_path)
    draft_path: str | None = None
    draft_label: str | None = None  # the speculative algorithm, for the note (None: no speculative decoding)
    # an MTP head builds its own embedding and lm_head and holds them while the pools are sized (sglang), or shares
    # the target's (vLLM)
    mtp_own_ends: bool = True


def _divisor(shard: str, par: Parallel) -> float:
    if shard == "attn":
        return par.attn_tp
    if shard == "kv":
        return min(par.attn_tp, par.kv_heads) if par.kv_heads else par.attn_tp
    if shard == "vocab":
        return 1 if par.dp_attention else par.tp
    if shard == "mlp":
        return par.tp
    if shard == "head":
        return par.attn_tp if par.dp_lm_head else par.tp
    if shard == "expert":
        return par.ep * max(1, par.tp // par.ep)
    return 1


def stage_of(p: Piece, stages: list[tuple[int, int]]) -> int:
    """Which PP stage holds a piece: its layer's stage; embeddings and vision on the first, head and MTP on the last."""
    if p.layer is not None and p.part == "target":
        for i, (s, e) in enumerate(stages):
            if s <= p.layer < e:
                return i
    if p.part == "mtp" or p.shard == "head" or (p.layer is None and p.name.endswith("norm.weight")
                                                and p.part == "target" and "layers" not in p.name):
        return len(stages) - 1
    return 0


def per_rank_bytes(inv: Inventory, par: Parallel, parts: tuple[str, ...], stages: list[tuple[int, int]]) -> int:
    """Bytes on the fullest rank: each piece divided by its shard width, summed per PP stage, max over stages.

    Kept on the inventory per layout: a cookbook page asks for the same checkpoint and layout in many cells."""
    key = ("per_rank", par, parts, tuple(stages))
    if key not in inv.memo:
        inv.remember(key, _per_rank_bytes(inv, par, parts, stages))
    nbytes: int = inv.memo[key]  # type: ignore[assignment]
    return nbytes


def _per_rank_bytes(inv: Inventory, par: Parallel, parts: tuple[str, ...], stages: list[tuple[int, int]]) -> int:
    totals = [0.0] * max(1, len(stages))
    for p in inv.pieces:
        if p.part in parts:
            totals[stage_of(p, stages)] += p.nbytes / _divisor(p.shard, par)
    return int(round(max(totals)))
