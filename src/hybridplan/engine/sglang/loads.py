"""What one rank of an sglang launch loads, as the weights layer's query: the checkpoint, its online quantization,
the parallel layout and pipeline stages that shard it, and the draft its speculative algorithm adds."""

from __future__ import annotations

from hybridplan.engine.sglang.args import EngineArgs
from hybridplan.engine.sglang.sizing import pp_stages
from hybridplan.models.geometry import ModelGeometry
from hybridplan.weights.inventory import Parallel, WeightsQuery

# the algorithms whose draft is an EAGLE-style worker: the checkpoint's own MTP head when no other draft is named
EAGLE_FAMILY = ("EAGLE", "EAGLE3", "STANDALONE", "FROZEN_KV_MTP")
NO_DRAFT_WEIGHTS = ("NGRAM", "UNO")  # drafts from the prompt, not a model


def parallel_of(args: EngineArgs, geo: ModelGeometry) -> Parallel:
    """The widths that shard the weights on one rank (TP, attention TP, PP, EP, attention DP, the DP lm_head)."""
    return Parallel(tp=args["tp_size"], attn_tp=args["attn_tp_size"], pp=args["pp_size"], ep=int(args.get("ep_size", 1)),
                    dp_attention=args["attn_dp_size"] > 1, dp_lm_head=bool(args.get("enable_dp_lm_head", False)),
                    kv_heads=geo.kv.total_kv_heads, num_layers=geo.num_hidden_layers)


def weights_query(args: EngineArgs, geo: ModelGeometry) -> WeightsQuery:
    """The weights layer's query for a resolved launch (model_runner.py loads the target, then the draft worker its
    draft: the in-checkpoint MTP head for the EAGLE family without another draft path, else the named checkpoint)."""
    algo = args["speculative_algorithm"]
    path = args["speculative_draft_model_path"]
    if algo is None or algo in NO_DRAFT_WEIGHTS:
        draft = "none"
    elif algo in EAGLE_FAMILY and (path is None or path == args["model_path"]):
        draft = "mtp"
    else:
        draft = "checkpoint"
    return WeightsQuery(model=args["model_path"], quantization=args.get("quantization"),
                        multimodal=bool(args["is_multimodal"]), parallel=parallel_of(args, geo),
                        stages=tuple(pp_stages(args, geo)), draft=draft, draft_path=path, draft_label=algo)
