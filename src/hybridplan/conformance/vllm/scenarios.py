"""The vLLM scenarios: a grid of launches (models x TP x dtypes x prefix caching x block size x length x available
KV memory x MTP x card) and Kimi-Linear's, each with the driver's payload and hybridplan's answer."""

from __future__ import annotations

import itertools
import json
import shlex
from typing import Any

from hybridplan.conformance.compare import Case
from hybridplan.conformance.vllm.model_side import non_default, predict
from hybridplan.conformance.vllm.schema import GdnMixer, KdaMixer, Mamba2Mixer, Scenario
from hybridplan.engine.vllm.engine import for_version as vllm_release

# bundled checkpoints per family the vLLM model covers (GDN: Qwen3-Next / Qwen3.5; Mamba2: Nemotron-H; KDA: KDA_MODEL)
MODELS = ("Qwen/Qwen3.5-27B", "Qwen/Qwen3-Next-80B-A3B-Instruct", "Qwen/Qwen3.5-35B-A3B",
          "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nvidia/Nemotron-H-47B-Base-8K")
# cards as vLLM sees them (catalog id, CUDA runtime major): Hopper, consumer and data-center Blackwell, Ampere
CARDS = (("h200", 12), ("rtx5090", 12), ("b200", 13), ("a100-80gb", 12))


def _engine(version: str) -> Any:
    return vllm_release(version)


_KEEP = (0, 21, 46, 71)  # grid residues kept of every 120 points: every value of every axis, 308 scenarios


def scenarios(version: str) -> list[Case]:
    """The grid (four points in 120: every value of every axis, 308 scenarios), then Kimi-Linear's (kda_scenarios):
    models x TP x KV dtype x state dtype x prefix caching x block size x length x available KV memory x MTP x card
    (its capability and CUDA runtime pick the GDN prefill kernel, its memory the batch defaults); each with the
    driver's payload and hybridplan's prediction. A release's own spelling turns prefix caching off
    (--no-enable-prefix-caching before 0.33.0); Mamba2 under prefix caching runs 'all' mode by default before
    0.28.0, and where the release's parser still offers it (until 0.31.0) half the prefix-caching launches ask for it
    with --mamba-cache-mode all. About one launch in seven names neither prefix-caching flag: the driver then takes
    the release's own default (EngineArgs), so the model's default is compared too."""
    engine = _engine(version)
    off = engine.prefix_caching_off
    reg = engine.registry()
    ask_all = "mamba_cache_mode" in reg.by_dest and "all" in (reg.flag_for("mamba_cache_mode").choices or ())
    out = []
    grid = [g for g in itertools.product(MODELS, (1, 2, 4), ("auto", "fp8"), ("auto", "float32"), (True, False),
                                         (None, 64), (None, 4096, -1), (6, 40), (0, 3), CARDS)
            if not (g[8] and "Nemotron" in g[0])]  # MTP is modelled on the GDN hybrids
    for n, (model, tp, kv, ssm, pc, block, length, gib, mtp, gpu) in enumerate(grid):
        if n % 120 not in _KEEP:
            continue
        default = n % 7 == 3  # about one launch in seven leaves prefix caching to the release's default
        argv = [model, "-tp", str(tp), "--kv-cache-dtype", kv, "--mamba-ssm-cache-dtype", ssm]
        argv += [] if default else ["--enable-prefix-caching" if pc else off]
        argv += (["--block-size", str(block)] if block else []) + (["--max-model-len", str(length)] if length else [])
        argv += ["--speculative-config", json.dumps({"method": "mtp", "num_speculative_tokens": mtp})] if mtp else []
        argv += ["--max-num-seqs", "64"] if n % 7 == 0 else []  # some launches set the request cap
        argv += ["--mamba-cache-mode", "all"] if ask_all and pc and not default and n % 2 == 0 else []
        argv += ["--gpu-memory-utilization", "0.9"] if n % 5 == 0 else []  # 0.34.0's refusals name it
        out.append(_scenario(engine, f"s{n}", argv, gpu, gib))
    return out + kda_scenarios(engine)


def _scenario(engine: Any, sid: str, argv: list[str], gpu: tuple[str, int], gib: int) -> Case:
    """One launch on a card with `gib` GiB of available KV memory: the driver's payload and hybridplan's prediction."""
    from hybridplan.models.loader import load_model

    from hybridplan.engine.vllm.serving.launch import card, resolve_on

    text = "vllm serve " + shlex.join(argv)
    geo = load_model(argv[0])
    c = card(gpu[0], gpu[1])
    cmd = engine.parse_command(text)
    args = resolve_on(engine, cmd, geo, c)
    return Case(id=sid, payload=payload(sid, args, geo, gib << 30, argv, c),
                predicted=predict(sid, engine, args, geo, gib << 30) | {"parsed": non_default(engine, cmd)},
                family=geo.family)


KDA_MODEL = "moonshotai/Kimi-Linear-48B-A3B-Instruct"
# every card family picks its own MLA backend: Hopper, consumer and data-center Blackwell, Ampere (sm80, sm86)
KDA_CARDS = (("h200", 12), ("rtx5090", 12), ("b200", 13), ("a100-80gb", 12), ("rtx3090", 12))
KDA_STRIDE = 71  # one grid point in 71: 122 scenarios, every value of every axis


def kda_scenarios(engine: Any) -> list[Case]:
    """Kimi-Linear (KDA + MLA): TP 1/2/4/8 (its 32 heads divide) x KV dtype (each picks its MLA backend) x
    --mamba-ssm-cache-dtype (0.33.0's model class reads it, its KDA layers do not) x prefix caching x block size
    (the backend's preferred, 16, 64: a user block can rule a backend out) x length x available KV memory x card."""
    from hybridplan.errors import BadInput
    from hybridplan.models.loader import load_model

    try:  # a release whose KDA state layout is not modelled refuses Kimi-Linear (behaviours.V0_20_1)
        engine.resolve(engine.parse_command(f"vllm serve {KDA_MODEL}"), load_model(KDA_MODEL))
    except BadInput:
        return []
    off = engine.prefix_caching_off
    out: list[Case] = []
    grid = itertools.product((1, 2, 4, 8), ("auto", "fp8", "bfloat16"), ("auto", "float32", "bfloat16", "float16"),
                             (True, False),
                             (None, 16, 64), (None, 32768, -1), (6, 40), KDA_CARDS)
    for n, (tp, kv, ssm, pc, block, length, gib, gpu) in enumerate(grid):
        if n % KDA_STRIDE:
            continue
        argv = [KDA_MODEL, "-tp", str(tp), "--kv-cache-dtype", kv, "--mamba-ssm-cache-dtype", ssm,
                "--enable-prefix-caching" if pc else off]
        argv += (["--block-size", str(block)] if block else []) + (["--max-model-len", str(length)] if length else [])
        out.append(_scenario(engine, f"k{n}", argv, gpu, gib))
    return out


def payload(sid: str, args: Any, geo: Any, memory: int, argv: list[str], c: Any) -> Scenario:
    """The driver's scenario: the cache arguments as vLLM's CacheConfig receives them, the calculators' inputs."""
    m = geo.mixer
    mixer: GdnMixer | Mamba2Mixer | KdaMixer
    if geo.family == "kda":  # linear_attn_config
        mixer = {"num_heads": m.num_heads, "head_dim": m.head_dim, "conv_kernel": m.conv_kernel}
    elif geo.family == "gdn":
        mixer = {"num_k_heads": m.n_groups, "num_v_heads": m.num_heads, "head_k_dim": m.state_size,
                 "head_v_dim": m.head_dim, "conv_kernel": m.conv_kernel}
    else:
        mixer = {"intermediate_size": m.intermediate_size, "n_groups": m.n_groups, "num_heads": m.num_heads,
                 "head_dim": m.head_dim, "state_size": m.state_size, "conv_kernel": m.conv_kernel,
                 "chunk_size": geo.mamba_chunk_size}
    attn = set(geo.full_attention_layer_ids)
    return {"id": sid, "family": geo.family, "tp": args.tensor_parallel_size,
            "num_speculative_tokens": args.num_speculative_tokens, "model_dtype": args.model_dtype,
            "architecture": geo.architecture, "mixer": mixer,
            "attn": {"total_kv_heads": geo.kv.total_kv_heads, "head_dim": geo.kv.head_dim,
                     "kv_lora_rank": geo.kv.kv_lora_rank, "qk_rope_head_dim": geo.kv.qk_rope_head_dim,
                     "num_heads": geo.kv.total_kv_heads},
            "layers": ["attention" if i in attn else "mamba" for i in sorted(attn | set(geo.linear_layer_ids))]
            + ["attention"] * args.draft_attention_layers,
            "cache": {"block_size": args.block_size, "kv_cache_dtype": args.kv_cache_dtype,
                      "enable_prefix_caching": args.enable_prefix_caching, "mamba_block_size": args.mamba_block_size,
                      "mamba_cache_dtype": args.mamba_cache_dtype, "mamba_ssm_cache_dtype": args.mamba_ssm_cache_dtype},
            "max_model_len": args.max_model_len, "original_max_model_len": -1 if args.auto_fit else args.max_model_len,
            "available_memory": memory, "argv": argv,
            "card": {"sm": c.sm, "cuda": c.cuda_runtime_major, "memory": c.total_memory_bytes, "name": c.name}}


