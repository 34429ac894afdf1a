"""Weights per rank for a resolved command: sources (headers > estimate), TP/PP/EP sharding, draft weights, the Hub."""

from __future__ import annotations

import sys
import types

import pytest

from hybridplan.models.catalog import read_text
from hybridplan.provenance import Source
from hybridplan.engine.api import weights_query
from hybridplan.weights.report import model_weights
from tests.conftest import resolve_cmd
from tests.weights.test_headers import write_safetensors

GIB = 1 << 30


def weights(flags: str, **kw):
    args, geo, _ = resolve_cmd(f"python -m sglang.launch_server {flags}")
    return model_weights(weights_query(args, geo), geo, **kw)


def test_catalog_total_size_is_a_headers_grade_fact():
    w = weights("--model-path Qwen/Qwen3.8-27B")
    assert w.checkpoint.value == 55_562_855_904 and w.checkpoint.source is Source.HEADERS
    # the MTP head is on disk but not loaded by the target runner; the vision tower is (Qwen3.5 is a VLM)
    assert w.target_per_rank.value < w.checkpoint.value
    lm_only = weights("--model-path Qwen/Qwen3.8-27B --language-model-only")
    assert lm_only.target_per_rank.value < w.target_per_rank.value
    assert w.draft_kind == "none" and w.draft_per_rank.value == 0


def test_tensor_parallel_halves_the_sharded_weights():
    one = weights("--model-path Qwen/Qwen3.8-27B").target_per_rank.value
    two = weights("--model-path Qwen/Qwen3.8-27B --tp-size 2").target_per_rank.value
    # norms, the ViT-free replicated bits and k/v projections (4 KV heads still split 2 ways) stay small
    assert one / 2 < two < one / 2 * 1.05


def test_pipeline_parallel_counts_the_fullest_stage():
    one = weights("--model-path Qwen/Qwen3.8-27B").target_per_rank.value
    two = weights("--model-path Qwen/Qwen3.8-27B --pp-size 2").target_per_rank.value
    assert one / 2 < two < one * 0.6  # embeddings + vision on stage 0, lm_head on stage 1


def test_expert_parallel_splits_the_experts():
    tp4 = weights("--model-path Qwen/Qwen3-Next-80B-A3B-Thinking --tp-size 4").target_per_rank.value
    ep4 = weights("--model-path Qwen/Qwen3-Next-80B-A3B-Thinking --tp-size 4 --ep-size 4").target_per_rank.value
    assert ep4 == pytest.approx(tp4, rel=0.001)  # EP4 x MoE-TP1 holds the same share as MoE-TP4


@pytest.mark.parametrize("flags,kind", [
    ("--speculative-algorithm NEXTN", "mtp"),
    ("--speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark", "checkpoint"),
    ("--speculative-algorithm NGRAM", "none"),
])
def test_draft_weights(flags, kind):
    w = weights(f"--model-path Qwen/Qwen3.8-27B {flags}")
    assert w.draft_kind == kind
    if kind == "mtp":  # one full-attention decoder layer + its MLP + the 2H -> H projection, bf16 ...
        held = w.draft_per_rank.value - w.draft_released_per_rank
        assert held / GIB == pytest.approx(0.79, abs=0.01)
        # ... and, while the pools are sized, its own bf16 embedding and lm_head (vocab 248,320 x hidden 5,120)
        assert w.draft_released_per_rank == 2 * 2 * 248_320 * 5120
    elif kind == "checkpoint":
        assert 3.0 < w.draft_per_rank.value / GIB < 3.6 and w.draft_per_rank.source is Source.ESTIMATE
    else:
        assert w.draft_per_rank.value == 0


def test_local_checkpoint_headers_win(tmp_path):
    (tmp_path / "config.json").write_text(read_text("Qwen__Qwen3.5-27B.json"))
    write_safetensors(tmp_path / "model.safetensors", {
        "model.language_model.layers.0.mlp.up_proj.weight": ("BF16", [17408, 5120], 17408 * 5120 * 2),
        "mtp.layers.0.mlp.up_proj.weight": ("BF16", [17408, 5120], 17408 * 5120 * 2),
    })
    w = weights(f"--model-path {tmp_path}")
    assert w.checkpoint.value == 2 * 17408 * 5120 * 2 and w.checkpoint.source is Source.HEADERS
    assert w.target_per_rank.value == 17408 * 5120 * 2  # the MTP tensor is not the target's


def test_weights_override_is_input():
    w = weights("--model-path Qwen/Qwen3.8-27B", target_gib=20.0)
    assert w.target_per_rank.value == 20 * GIB and w.target_per_rank.source is Source.INPUT


def _fake_hub(monkeypatch, fn):
    mod = types.ModuleType("huggingface_hub")
    mod.get_safetensors_metadata = fn
    monkeypatch.setitem(sys.modules, "huggingface_hub", mod)


def test_hub_offline_falls_back_to_the_estimate_with_one_line(monkeypatch):
    def offline(repo_id):
        raise ConnectionError("Max retries exceeded\nwith url ...")

    _fake_hub(monkeypatch, offline)
    w = weights("--model-path Qwen/Qwen3.5-27B", hub=True)
    assert w.checkpoint.source is Source.ESTIMATE
    assert any("Hub metadata for Qwen/Qwen3.5-27B unavailable (ConnectionError: Max retries exceeded)" in n
               for n in w.notes)


def test_hub_metadata_gives_header_bytes(monkeypatch):
    info = types.SimpleNamespace(dtype="BF16", shape=[500], data_offsets=(0, 1000))  # huggingface_hub.TensorInfo
    meta = types.SimpleNamespace(files_metadata={"a.safetensors": types.SimpleNamespace(
        tensors={"model.language_model.layers.0.mlp.up_proj.weight": info})})
    _fake_hub(monkeypatch, lambda repo_id: meta)
    w = weights("--model-path Qwen/Qwen3.5-27B", hub=True)
    assert w.checkpoint.value == 1000 and w.checkpoint.source is Source.HEADERS


def test_hub_metadata_is_checked_like_a_local_header(monkeypatch):
    info = types.SimpleNamespace(dtype="BF16", shape=[500], data_offsets=("0", "1000"))
    meta = types.SimpleNamespace(files_metadata={"a.safetensors": types.SimpleNamespace(tensors={"w": info})})
    _fake_hub(monkeypatch, lambda repo_id: meta)
    w = weights("--model-path Qwen/Qwen3.5-27B", hub=True)
    assert w.checkpoint.source is Source.ESTIMATE
    assert any(n.startswith("Qwen/Qwen3.5-27B/a.safetensors: `w.data_offsets` must be two integers") and
               n.endswith("; using the estimate") for n in w.notes)
