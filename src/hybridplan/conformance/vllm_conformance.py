"""vLLM conformance: generated scenarios through vLLM's own planning (vllm_oracle_driver.py, in the oracle
interpreter) and through hybridplan's model of the release, compared field by field."""

from __future__ import annotations

import itertools
import json
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from hybridplan.engine.vllm.engine import for_version as vllm_release
from hybridplan.conformance import vllm_oracle_schema as schema
from hybridplan.conformance.vllm_oracle_schema import GdnMixer, Header, KdaMixer, Mamba2Mixer, Result, Scenario
from hybridplan.errors import EngineRefusal

# bundled checkpoints per family the vLLM model covers (GDN: Qwen3-Next / Qwen3.5; Mamba2: Nemotron-H; KDA: KDA_MODEL)
MODELS = ("Qwen/Qwen3.5-27B", "Qwen/Qwen3-Next-80B-A3B-Instruct", "Qwen/Qwen3.5-35B-A3B",
          "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nvidia/Nemotron-H-47B-Base-8K")
FIELDS = ("parsed", "attention_backend", "block_size", "mamba_block_size", "mamba_cache_mode", "mamba_page_size_padded", "attn_page_bytes",
          "state_page_bytes", "page_bytes", "num_blocks", "groups", "max_model_len", "kv_cache_tokens",
          "max_concurrency", "conv_shape", "temporal_shape", "state_dtypes", "max_num_seqs", "max_num_batched_tokens")
# cards as vLLM sees them (catalog id, CUDA runtime major): Hopper, consumer and data-center Blackwell, Ampere
CARDS = (("h200", 12), ("rtx5090", 12), ("b200", 13), ("a100-80gb", 12))


@dataclass(frozen=True)
class Drift:
    scenario: str
    field: str
    engine: Any
    hybridplan: Any


def _engine(version: str) -> Any:
    return vllm_release(version)


_KEEP = (0, 21, 46, 71)  # grid residues kept of every 120 points: every value of every axis, 308 scenarios


def scenarios(version: str) -> list[dict[str, Any]]:
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


def _scenario(engine: Any, sid: str, argv: list[str], gpu: tuple[str, int], gib: int) -> dict[str, Any]:
    """One launch on a card with `gib` GiB of available KV memory: the driver's payload and hybridplan's prediction."""
    from hybridplan.models.loader import load_model

    from hybridplan.engine.vllm.serving.launch import card, resolve_on

    text = "vllm serve " + shlex.join(argv)
    geo = load_model(argv[0])
    c = card(gpu[0], gpu[1])
    cmd = engine.parse_command(text)
    args = resolve_on(engine, cmd, geo, c)
    return {"id": sid, "family": geo.family, "command": text,
            "payload": payload(sid, args, geo, gib << 30, argv, c),
            "predicted": predict(sid, engine, args, geo, gib << 30) | {"parsed": non_default(engine, cmd)}}


KDA_MODEL = "moonshotai/Kimi-Linear-48B-A3B-Instruct"
# every card family picks its own MLA backend: Hopper, consumer and data-center Blackwell, Ampere (sm80, sm86)
KDA_CARDS = (("h200", 12), ("rtx5090", 12), ("b200", 13), ("a100-80gb", 12), ("rtx3090", 12))
KDA_STRIDE = 71  # one grid point in 71: 122 scenarios, every value of every axis


def kda_scenarios(engine: Any) -> list[dict[str, Any]]:
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
    out: list[dict[str, Any]] = []
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


def non_default(engine: Any, cmd: Any) -> dict[str, Any]:
    """The parsed values that differ from the parser's defaults (what the driver reads off vLLM's namespace)."""
    reg = engine.registry()
    return {k: v for k, v in cmd.values.items() if v != reg.default(k)}


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


def predict(sid: str, engine: Any, args: Any, geo: Any, memory: int) -> dict[str, Any]:
    """hybridplan's plan in the driver's result schema."""
    try:
        p = engine.plan(args, geo, memory)
    except EngineRefusal as exc:
        return {"id": sid, "error": {"type": exc.kind, "message": exc.message}}
    return {"id": sid, "attention_backend": args.attn_backend.name, "max_num_seqs": args.max_num_seqs, "max_num_batched_tokens": args.max_num_batched_tokens,
            "block_size": p.block_size, "mamba_block_size": p.mamba_block_size,
            "mamba_cache_mode": p.mamba_cache_mode, "mamba_page_size_padded": p.mamba_page_size_padded,
            "attn_page_bytes": p.attn_page_bytes, "state_page_bytes": p.state_page_bytes, "page_bytes": p.page_bytes,
            "num_blocks": p.num_blocks, "max_model_len": p.max_model_len, "kv_cache_tokens": p.kv_cache_tokens,
            "max_concurrency": repr(p.max_concurrency), "conv_shape": list(p.conv_shape),
            "temporal_shape": list(p.temporal_shape), "state_dtypes": list(p.state_dtypes),
            "groups": [{"kind": g.kind, "layers": g.layers, "block_size": g.block_size,
                        "blocks_per_request": g.blocks_per_request} for g in p.groups]}


def run_oracle(python: str, pythonpath: str, payloads: list[Scenario], timeout: float = 600) -> tuple[
        Header, dict[str, Result]]:
    """(header, {id: result}) from the driver run by `python` with the release on `pythonpath`."""
    driver = str(resources.files("hybridplan.conformance") / "vllm_oracle_driver.py")
    proc = subprocess.run([python, driver], input="".join(json.dumps(p) + "\n" for p in payloads),
                          capture_output=True, text=True, timeout=timeout, env={"PYTHONPATH": pythonpath,
                                                                                "PATH": "/usr/bin:/bin"})
    return read_answer(proc.stdout, proc.stderr)


def read_answer(stdout: str, stderr: str = "") -> tuple[Header, dict[str, Result]]:
    """The driver's header and results, each checked against vllm_oracle_schema (SchemaError names the field);
    RuntimeError when there is no vLLM behind it."""
    # JSON lines only: an older release's logger also writes to stdout (0.24.0's import-time version warning)
    try:
        lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    except ValueError as exc:
        raise schema.SchemaError(f"vLLM oracle answer: not JSON ({exc})") from None
    if not lines:
        raise RuntimeError(f"no vLLM oracle: {stderr[-500:]}")
    header = schema.header(lines[0])
    if header["engine"] is None:
        raise RuntimeError(f"no vLLM oracle: {header.get('error')}")
    results = [schema.result(line) for line in lines[1:]]
    return header, {r["id"]: r for r in results}


def compare(engine: Mapping[str, Any], ours: Mapping[str, Any]) -> list[Drift]:
    """Every field, or the error type and message, that differs (the parse always)."""
    sid = engine["id"]
    if engine.get("parsed") != ours.get("parsed"):
        return [Drift(sid, "parsed", engine.get("parsed"), ours.get("parsed"))]
    if "error" in engine or "error" in ours:
        e, o = engine.get("error"), ours.get("error")
        return [] if e == o else [Drift(sid, "error", e, o)]
    return [Drift(sid, f, engine[f], ours[f]) for f in FIELDS if engine[f] != ours[f]]
