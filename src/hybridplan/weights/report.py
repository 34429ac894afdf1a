"""Weights a launch command puts on each GPU: the target (and vision tower), and the draft, from the best source.

Sources, best first: a number the user gives; the local checkpoint's safetensors headers (exact) or its index
`total_size`; the catalog's `total_size`; the Hub's headers (only when asked, it needs the network); an estimate
from config.json and the quantization. A total without headers keeps the estimate's split across modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from hybridplan.errors import BadInput
from hybridplan.models.geometry import ModelGeometry
from hybridplan.models.loader import ConfigSource, bundled_id, catalog_source, resolve_config
from hybridplan.provenance import Source, Sourced
from hybridplan.weights.estimate import estimate
from hybridplan.weights.headers import from_directory
from hybridplan.weights.inventory import Inventory, Parallel, WeightsQuery, per_rank_bytes
from hybridplan.weights.quant import QuantPolicy, method_policy, policy_from_config, with_lm_head

GIB = 1 << 30


@dataclass(frozen=True, kw_only=True)
class WeightReport:
    """Checkpoint bytes on disk and the bytes the target and draft runners hold on the fullest rank."""

    checkpoint: Sourced  # bytes of the whole target checkpoint (every part)
    target_per_rank: Sourced  # target runner: language model (+ vision tower when multimodal), fullest rank
    draft_per_rank: Sourced  # draft runner: MTP head or separate draft checkpoint (0 without speculation)
    draft_kind: str  # none | mtp | checkpoint
    notes: tuple[str, ...] = field(default_factory=tuple)
    # of draft_per_rank: what the draft holds when the pools are sized and hands back before graph capture (an
    # in-checkpoint MTP head's own embedding and lm_head, replaced by the target's)
    draft_released_per_rank: int = 0

    @property
    def per_rank_bytes(self) -> int:
        return int(self.target_per_rank.value) + int(self.draft_per_rank.value)

    def as_dict(self) -> dict[str, Any]:
        return {"checkpoint_bytes": self.checkpoint.as_dict(), "target_bytes_per_rank": self.target_per_rank.as_dict(),
                "draft_bytes_per_rank": self.draft_per_rank.as_dict(), "draft_kind": self.draft_kind,
                "draft_released_bytes_per_rank": self.draft_released_per_rank, "notes": list(self.notes)}


def estimator_family(geo: ModelGeometry) -> str:
    """Which module-list estimator covers a geometry."""
    if geo.is_gdn:
        return "gdn"
    if geo.is_kda:
        return "kda"
    if geo.model_type.startswith("nemotron_h"):
        return "nemotron_h"
    return geo.family


def inventory_of(src: ConfigSource, family: str, full_layers: tuple[int, ...], *, hub: bool = False,
                 policy: QuantPolicy | None = None, needed: bool = True) -> tuple[Inventory, list[str]]:
    """The best inventory for one checkpoint, and notes on the sources tried. A bad weights file in the checkpoint
    directory is the caller's error when the answer `needed` the bytes; else the next source replaces it, noted."""
    hf_id = bundled_id(src)
    if hf_id is not None and not hub and policy is None:
        inv, notes = _catalog_inventory(src.ref, hf_id, family, tuple(full_layers))
        return inv, list(notes)
    try:
        return _inventory_of(src, family, full_layers, hub=hub, policy=policy)
    except BadInput as exc:
        if needed or src.checkpoint_dir is None:
            raise
        inv, tried = _inventory_of(replace(src, checkpoint_dir=None), family, full_layers, hub=hub, policy=policy)
        return inv, [f"{exc.message}; not needed for this answer, the checkpoint bytes are the {inv.source.value} "
                     f"instead ({inv.note})", *tried]


@lru_cache(maxsize=64)
def _catalog_inventory(ref: str, hf_id: str, family: str, full_layers: tuple[int, ...]) -> tuple[Inventory, tuple[str, ...]]:
    """A bundled entry's inventory, once per process (package data; a cookbook page sizes it for every selection)."""
    inv, notes = _inventory_of(catalog_source(ref, hf_id), family, full_layers)
    return inv, tuple(notes)


def _inventory_of(src: ConfigSource, family: str, full_layers: tuple[int, ...], *, hub: bool = False,
                  policy: QuantPolicy | None = None) -> tuple[Inventory, list[str]]:
    notes: list[str] = []
    total: int | None = None
    total_note = ""
    if src.checkpoint_dir is not None:
        found = from_directory(src.checkpoint_dir)
        if isinstance(found, Inventory):
            return found, notes
        if found is not None:
            total, total_note = found, f"model.safetensors.index.json total_size in {src.checkpoint_dir}"
    if total is None and src.entry is not None and src.entry.total_size:
        total, total_note = src.entry.total_size, f"catalog total_size of {src.entry.hf_id}"
    if total is None and hub:
        from hybridplan.weights.hub import from_hub

        try:
            return from_hub(src.ref), notes
        except BadInput as exc:
            notes.append(f"{exc.message}; using the estimate")
    inv = estimate(src.config, family, full_layers, policy or storage_policy(src))
    if total is not None:
        return inv.scaled_to(total, Source.HEADERS, f"{total_note} (split across modules as estimated)"), notes
    return inv, notes


def storage_policy(src: ConfigSource) -> QuantPolicy:
    """How the checkpoint stores its weights: its own quantization config, or the catalog's sibling layer map."""
    w = src.entry.weights if src.entry is not None else None
    if w is None or w.layer_map_file is None:
        policy = policy_from_config(src.config, src.hf_quant_config)
    else:
        policy = _layer_map_policy(w.layer_map_file, w.note)
    return with_lm_head(policy, w.lm_head) if w is not None and w.lm_head else policy


@lru_cache(maxsize=64)
def _layer_map_policy(layer_map_file: str, note: str) -> QuantPolicy:
    """A bundled layer map's policy, read once per process (package data)."""
    from hybridplan.models.catalog import read_text
    from hybridplan.models.config_json import parse_config_text

    policy = policy_from_config({}, parse_config_text(read_text(layer_map_file), origin=layer_map_file))
    return replace(policy, label=f"{policy.label} layer map of {layer_map_file} ({note})")


def _sourced(nbytes: int, inv: Inventory, what: str) -> Sourced:
    return Sourced(value=nbytes, source=inv.source, note=f"{what}: {inv.note}")


def model_weights(q: WeightsQuery, geo: ModelGeometry, *, hub: bool = False, target_gib: float | None = None,
                  checkpoint_bytes: int | None = None, policy: QuantPolicy | None = None) -> WeightReport:
    """Target and draft weights per rank for what an engine's resolved launch loads (`q`).

    `target_gib` overrides the target's bytes per rank (a boot log's "Load weight end ... mem usage");
    `checkpoint_bytes` gives the whole checkpoint's size (split across modules as estimated).
    """
    src = resolve_config(q.model)
    implied = method_policy(q.quantization, src.config, src.hf_quant_config) if policy is None else None
    if implied is not None:  # another checkpoint than the config's own: its catalog or index total does not apply
        src, policy = replace(src, entry=None, checkpoint_dir=None), implied
    if checkpoint_bytes is not None:
        if checkpoint_bytes <= 0:
            raise BadInput(f"checkpoint bytes must be positive, got {checkpoint_bytes}")
        est = estimate(src.config, estimator_family(geo), geo.full_attention_layer_ids, policy or storage_policy(src))
        notes: list[str] = []
        inv = est.scaled_to(checkpoint_bytes, Source.INPUT, "checkpoint size given (split as estimated)")
    else:
        inv, notes = inventory_of(src, estimator_family(geo), geo.full_attention_layer_ids, hub=hub, policy=policy,
                                  needed=target_gib is None)
    par, stages = q.parallel, list(q.stages)
    parts = ("target", "vision") if q.multimodal else ("target",)
    target = per_rank_bytes(inv, par, parts, stages)
    if target_gib is not None:
        target_s = Sourced(value=int(target_gib * GIB), source=Source.INPUT, note="--weights-gib")
    else:
        what = "language model" + (" + vision tower" if "vision" in parts else "")
        target_s = _sourced(target, inv, what)
    draft_s, kind, dnotes = _draft(q, inv, par, stages, hub)
    released = _mtp_own_ends(src.config, par) if kind == "mtp" and draft_s.value and q.mtp_own_ends else 0
    if released:
        draft_s = Sourced(value=int(draft_s.value) + released, source=draft_s.source, note=(
            f"{draft_s.note}; + its own embedding and lm_head as constructed ({released / GIB:.2f} GiB, bf16, "
            "vocab-parallel), held while the pools are sized and replaced by the target's before graph capture "
            "(models/qwen3_5_mtp.py::set_embed_and_head, speculative/eagle_worker_v2.py::init_lm_head)"))
    checkpoint = Sourced(value=inv.total(), source=inv.source, note=inv.note)
    return WeightReport(checkpoint=checkpoint, target_per_rank=target_s, draft_per_rank=draft_s, draft_kind=kind,
                        notes=tuple(notes + dnotes), draft_released_per_rank=released)


def _mtp_own_ends(config: dict[str, Any], par: Parallel) -> int:
    """The embedding and lm_head an in-checkpoint MTP draft builds for itself (VocabParallelEmbedding, ParallelLMHead
    in the model dtype, vocab split over TP) before the EAGLE worker swaps in the target's: the draft runner loads
    them before the pools are sized, so they count there (club-3090's single RTX 3090 AutoRound boot: "minimum
    viable 0.98" with the MTP head, data/sglang_launch_reports.yaml)."""
    nested = config.get("text_config")
    text: dict[str, Any] = nested if isinstance(nested, dict) else config
    vocab, hidden = int(text.get("vocab_size") or 0), int(text.get("hidden_size") or 0)
    head_tp = 1 if par.dp_lm_head else par.tp
    return 2 * hidden * (-(-vocab // par.tp) + -(-vocab // head_tp))


def _draft(q: WeightsQuery, inv: Inventory, par: Parallel, stages: list[tuple[int, int]],
           hub: bool) -> tuple[Sourced, str, list[str]]:
    """The draft runner's weights: the in-checkpoint MTP head, or a separate draft checkpoint."""
    if q.draft == "none":
        return Sourced(value=0, source=Source.ENGINE_RULE,
                       note=f"{q.draft_label or 'no speculative decoding'}: no draft weights"), "none", []
    path = q.draft_path
    if q.draft == "mtp":
        mtp = per_rank_bytes(inv, par, ("mtp",), stages)
        notes = [] if mtp else ["the target checkpoint shows no MTP tensors; the draft's weights are not counted"]
        return _sourced(mtp, inv, "in-checkpoint MTP head (embeddings and lm_head shared with the target)"), "mtp", notes
    if path is None:
        raise BadInput(f"{q.draft_label}: the draft checkpoint is not named (--speculative-draft-model-path)")
    src = resolve_config(path)
    dinv, notes = inventory_of(src, "draft", (), hub=hub)
    one_stage = [(0, 1 << 30)]
    nbytes = per_rank_bytes(dinv, par, ("target", "mtp", "vision"), one_stage)
    return _sourced(nbytes, dinv, f"draft checkpoint {path}"), "checkpoint", notes
