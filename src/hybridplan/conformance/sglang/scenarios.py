"""Deterministic, seeded launch scenarios for the conformance suite.

Every model directory is covered round-robin; each scenario then samples the stand-in GPU (one per memory tier
of handle_gpu_memory_settings), parallelism (TP, attention DP, PP), the radix strategy, overlap and
SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK, state and KV dtypes, a speculative algorithm (with or without a draft path,
ReplaySSM spec-verify), the `_handle_max_mamba_cache` branch inputs, an explicit or the GPU-dependent default
--mem-fraction-static, and a memory profile from roomy down to too small, so the engine's refusals are hit too.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, TypeVar

from hybridplan.conformance.sglang.fixtures import ModelDir
from hybridplan.conformance.sglang.schema import ScenarioPayload

GIB_PER_MIB = 1 / 1024
H200_MIB = 143771  # the card the memory profiles are drawn for; other cards scale them
# Stand-in GPU sizes (MiB as nvidia-smi reports them, data/gpus.yaml), one per tier of
# memory_hook.py::handle_gpu_memory_settings (<20, <35, <60, <90, <160, >=160 GiB), weighted toward the H200.
GPUS: list[tuple[int, float]] = [(15360, 4), (24564, 6), (46068, 6), (81559, 10), (97887, 6), (H200_MIB, 60),
                                    (183359, 8)]
NOMINAL_MFS = 0.85  # the fraction a profile assumes when the command leaves --mem-fraction-static to the engine

# Draft checkpoints (catalog ids) per target, by algorithm; absent targets take the path-less algorithms only.
_QWEN27_DRAFTS: dict[str, tuple[str, ...]] = {"DFLASH": ("SpecForge/qwen3.5-27b-dflash", "SpecForge/qwen3.6-27b-dflash", "incoai/Qwen3.8-27B-DFlash2"),
                  "DSPARK": ("SpecForge/qwen3.6-27b-dspark", "RadixArk/Qwen3.8-27B-DSpark")}
_QWEN35B_DRAFTS: dict[str, tuple[str, ...]] = {"DFLASH": ("SpecForge/qwen3.5-35b-a3b-dflash",), "EAGLE3": ("SpecForge/qwen3.5-35b-a3b-eagle3",)}
DRAFTS: dict[str, dict[str, tuple[str, ...]]] = {
    "Qwen/Qwen3.5-27B": _QWEN27_DRAFTS, "Qwen/Qwen3.6-27B": _QWEN27_DRAFTS, "Qwen/Qwen3.8-27B": _QWEN27_DRAFTS,
    "Qwen/Qwen3.8-27B-FP8": _QWEN27_DRAFTS, "RadixArk/Qwen3.8-27B-NVFP4": _QWEN27_DRAFTS,
    "RadixArk/Qwen3.8-27B-NVFP4-BF16-LMHead": _QWEN27_DRAFTS, "nvidia/Qwen3.8-27B-NVFP4": _QWEN27_DRAFTS,
    "nvidia/Qwen3.6-27B-NVFP4": _QWEN27_DRAFTS,
    "Qwen/Qwen3.5-35B-A3B": _QWEN35B_DRAFTS, "Qwen/Qwen3.6-35B-A3B": _QWEN35B_DRAFTS,
    "nvidia/Qwen3.6-35B-A3B-NVFP4": _QWEN35B_DRAFTS,
    "Qwen/Qwen3.5-9B": {"DFLASH": ("SpecForge/qwen3.5-4b-dflash",)},
    "Qwen/Qwen3-Next-80B-A3B-Thinking": {"EAGLE3": ("SpecForge/qwen3-next-80b-a3b-eagle3",)},
    "Qwen/Qwen3-Next-80B-A3B-Instruct": {"EAGLE3": ("SpecForge/qwen3-next-80b-a3b-eagle3",)},
    "moonshotai/Kimi-K3": {"DSPARK": ("SpecForge/kimi-k3-dspark", "RadixArk/Kimi-K3-DSpark")},
}

_T = TypeVar("_T")


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One launch command and memory profile, given to both sides."""

    id: str
    model: str  # ModelDir key
    argv: tuple[str, ...]  # the engine's flags (after the launcher), --model-path first
    env: tuple[tuple[str, str], ...] = ()
    available_gib: float | None = None  # free memory when the KV pool is sized (A); None: no sizing
    pre_load_gib: float | None = None  # pre_model_load_memory (P)
    record_len: int = 8  # ReplaySSM ring length the geometry check prices
    gpu_mib: int = H200_MIB  # the stand-in GPU's memory.total
    tags: tuple[str, ...] = ()  # what was sampled, for the tally

    def payload(self) -> ScenarioPayload:
        """The JSON object the oracle driver reads."""
        return {"id": self.id, "argv": list(self.argv), "env": dict(self.env), "available_gib": self.available_gib,
                "pre_load_gib": self.pre_load_gib, "record_len": self.record_len, "gpu_mib": self.gpu_mib}


def _pick(rng: random.Random, weighted: list[tuple[_T, float]]) -> _T:
    return rng.choices([v for v, _ in weighted], weights=[w for _, w in weighted], k=1)[0]


def _spec(rng: random.Random, model: ModelDir, models: dict[str, ModelDir], argv: list[Any], tags: list[Any]) -> str | None:
    """A speculative algorithm and its flags; returns the algorithm name (None for none)."""
    drafts = DRAFTS.get(model.key, {})
    choices: list[tuple[str | None, float]] = [(None, 40), ("EAGLE", 8), ("NEXTN", 8), ("NGRAM", 5), ("REPLAY", 6),
                                           ("DFLASH-nopath", 1), ("DSPARK-nopath", 1), ("EAGLE3", 4)]
    choices += [(algo, 12) for algo in drafts]
    algo = _pick(rng, choices)
    if algo is None:
        return None
    if algo == "REPLAY":
        tags.append("replayssm_spec")
        argv += ["--enable-linear-replayssm-spec", "--linear-attn-decode-backend", "triton",
                 "--max-running-requests", str(rng.choice([8, 32, 64]))]
        algo = rng.choice(["EAGLE", "NEXTN"] + list(drafts))
        if "--mamba-radix-cache-strategy" not in argv and rng.random() < 0.5:
            argv += ["--mamba-radix-cache-strategy", "no_buffer", "--disable-overlap-schedule"]
    if algo.endswith("-nopath"):
        algo = algo.split("-")[0]
        argv += ["--speculative-algorithm", algo]
        tags.append(f"spec:{algo}:no-path")
        return algo
    argv += ["--speculative-algorithm", algo]
    path = drafts.get(algo)
    if path:
        argv += ["--speculative-draft-model-path", models[rng.choice(path)].path]
        tags.append(f"spec:{algo}:draft")
    else:
        tags.append(f"spec:{algo}")
    if algo in ("EAGLE", "NEXTN", "EAGLE3") and rng.random() < 0.5:
        steps, topk = rng.choice([(1, 1), (2, 1), (3, 1), (5, 1), (3, 4)])
        argv += ["--speculative-num-steps", str(steps), "--speculative-eagle-topk", str(topk),
                 "--speculative-num-draft-tokens", str(rng.choice([steps + 1, 8]))]
    elif algo == "DFLASH" and rng.random() < 0.4:
        argv += ["--speculative-dflash-block-size", str(rng.choice([4, 8, 16]))]
    elif algo == "DSPARK" and rng.random() < 0.4:
        argv += ["--speculative-dspark-block-size", str(rng.choice([3, 7, 15]))]
    elif algo == "NGRAM" and rng.random() < 0.5:
        argv += ["--speculative-num-draft-tokens", str(rng.choice([4, 8, 12]))]
    return algo


# The default --mem-fraction-static grid: a VLM whose config class aliases its ViT depth (Kimi-K3), a VLM that
# leaves the depth to the engine's default (Qwen3.5), and two text-only models, each on every stand-in GPU.
GRID_MODELS = ("moonshotai/Kimi-K3", "Qwen/Qwen3.5-35B-A3B", "Qwen/Qwen3-Next-80B-A3B-Instruct",
               "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8")
GRID_PARALLEL = {"no_dp": ("--tp-size", "8"), "attn_dp": ("--tp-size", "8", "--enable-dp-attention", "--dp", "4")}


def default_fraction_grid(models: dict[str, ModelDir]) -> list[Scenario]:
    """Every GRID_MODELS x GPUS x (attention DP or not), no --mem-fraction-static, sized on a roomy profile."""
    out = []
    for key in (k for k in GRID_MODELS if k in models):
        model = models[key]
        for gpu_mib, _ in GPUS:
            for dp, flags in GRID_PARALLEL.items():
                pre = round(gpu_mib * GIB_PER_MIB * 0.98, 4)
                tags = ("grid", f"gpu:{gpu_mib}", "vlm" if model.is_multimodal else "text", "mfs:default", dp)
                out.append(Scenario(id=f"grid-{key.split('/')[-1]}-{gpu_mib}-{dp}", model=key,
                                    argv=("--model-path", model.path, *flags), gpu_mib=gpu_mib, pre_load_gib=pre,
                                    available_gib=round(pre * (1 - NOMINAL_MFS) + pre * 0.3, 4),
                                    tags=tuple(t for t in tags if t != "no_dp")))
    return out


def generate(models: dict[str, ModelDir], n: int, seed: int = 0) -> list[Scenario]:
    """`n` scenarios, the same for the same (models, n, seed)."""
    rng = random.Random(seed)
    targets = sorted(k for k, m in models.items() if not m.is_draft)
    out = []
    for i in range(n):
        key = targets[i % len(targets)]
        model = models[key]
        argv: list[str] = ["--model-path", model.path]
        env: dict[str, str] = {}
        gpu_mib = _pick(rng, GPUS)
        gpu_gib = gpu_mib * GIB_PER_MIB
        tags: list[str] = [f"gpu:{gpu_mib}", "vlm" if model.is_multimodal else "text"]
        tp = _pick(rng, [(1, 40), (2, 25), (4, 20), (8, 15)])
        if tp > 1:
            argv += ["--tp-size", str(tp)]
        if tp > 1 and rng.random() < 0.2:
            dp = rng.choice([d for d in (2, 4, 8) if d <= tp])
            argv += ["--enable-dp-attention", "--dp", str(dp)]
            tags.append("attn_dp")
        if rng.random() < 0.12:
            argv += ["--pp-size", str(rng.choice([2, 2, 4]))]
            tags.append("pp")
        radix = _pick(rng, [("auto", 40), ("extra_buffer", 15), ("extra_buffer_lazy", 10), ("no_buffer", 15),
                            ("off", 15)])
        tags.append(f"radix:{radix}")
        if radix == "off":
            argv.append("--disable-radix-cache")
        elif radix != "auto":
            argv += ["--mamba-radix-cache-strategy", radix]
        if rng.random() < (0.8 if radix == "no_buffer" else 0.2):
            argv.append("--disable-overlap-schedule")
            tags.append("no_overlap")
        if rng.random() < 0.25:
            env["SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK"] = rng.choice(["1", "true", "0"])
            tags.append("skip_decode_lock")
        if rng.random() < 0.3:
            argv += ["--mamba-ssm-dtype", rng.choice(["float32", "bfloat16", "float16"])]
        if rng.random() < 0.12:
            env["SGLANG_MAMBA_SSM_DTYPE"] = rng.choice(["float32", "bfloat16", "float16"])
        if rng.random() < 0.1:
            env["SGLANG_MAMBA_CONV_DTYPE"] = rng.choice(["float32", "bfloat16", "float16"])
        kv = _pick(rng, [(None, 60), ("fp8_e4m3", 15), ("bf16", 10), ("fp8_e5m2", 10), ("bfloat16", 5)])
        if kv:
            argv += ["--kv-cache-dtype", kv]
        algo = _spec(rng, model, models, argv, tags)
        if "--max-running-requests" not in argv and rng.random() < 0.3:
            argv += ["--max-running-requests", str(rng.choice([4, 16, 48, 64, 128, 256, 1024]))]
        if rng.random() < 0.15:
            argv += ["--max-mamba-cache-size", str(rng.choice([8, 64, 200, 600, 2000]))]
        if rng.random() < 0.15:
            argv += ["--mamba-full-memory-ratio", str(rng.choice([0.5, 0.9, 2.0, 4.0]))]
        if rng.random() < 0.15:
            argv += ["--page-size", str(rng.choice([16, 64, 256]))]
        if rng.random() < 0.1:
            argv += ["--max-total-tokens", str(rng.choice([4096, 65536, 500000]))]
        if rng.random() < 0.1:
            argv += ["--context-length", str(rng.choice([8192, 32768]))]
        sized = rng.random() < 0.92
        mfs = rng.choice([0.6, 0.75, 0.8, 0.85, 0.88, 0.9, 0.93]) if rng.random() < 0.7 else None
        if mfs is None:
            tags.append("mfs:default")
        else:
            argv += ["--mem-fraction-static", str(mfs)]
        available = pre = None
        if sized:
            pre = round(gpu_gib * rng.uniform(0.97, 0.995), 4)
            rest = _pick(rng, [(-0.5, 3), (0.05, 3), (0.4, 5), (2.0, 10), (8.0, 15), (25.0, 25), (60.0, 25),
                               (100.0, 14)]) * rng.uniform(0.8, 1.2) * gpu_mib / H200_MIB
            available = round(rest + pre * (1 - (mfs or NOMINAL_MFS)), 4)
        tags.append(f"spec:{algo or 'none'}" if not any(t.startswith("spec:") for t in tags) else "")
        out.append(Scenario(id=f"s{seed}-{i:04d}", model=key, argv=tuple(argv), env=tuple(sorted(env.items())),
                            available_gib=available, pre_load_gib=pre, record_len=rng.choice([4, 8, 16]),
                            gpu_mib=gpu_mib, tags=tuple(t for t in tags if t)))
    return out


# Commands where releases 0.5.18-0.5.23 differ (engine/sglang/behaviours.py), each named after the switch it exercises:
# text-only Qwen3.5-family archs, the 20-35 GiB tier, --max-running-requests below attention DP,
# attention DP with spec, DFLASH with attention DP, PD prefill with MTP, path-less MTP draft KV, the PP and KDA
# breakable-prefill-graph rules, the ReplaySSM ring, pure SSM configs, DSpark with PP, post-capture KV sizing and
# its capped full-prefill exemption, and flags a release removed or added.
_MID_TIER_MIB = 24564
_NEXT = "Qwen/Qwen3-Next-80B-A3B-Instruct"
_POST_CAPTURE = (("SGLANG_ENABLE_POST_CAPTURE_KV_SIZING", "1"),)
_FULL_PREFILL = '{"prefill": {"backend": "full", "full_prefill_max_req": 8}}'
RELEASE_CASES: dict[str, tuple[str, tuple[str, ...], int, tuple[tuple[str, str], ...]]] = {
    # name: (model, flags after --model-path, stand-in GPU MiB, env)
    "text-qwen35-auto": ("Qwen/Qwen3.8-2.4T-A95B", ("--tp-size", "8"), H200_MIB, ()),
    "text-qwen35-no-buffer": ("Qwen/Qwen3.8-2.4T-A95B", ("--tp-size", "8", "--mamba-radix-cache-strategy",
                                                           "no_buffer"), H200_MIB, ()),
    "mid-tier": (_NEXT, ("--tp-size", "4"), _MID_TIER_MIB, ()),
    "mid-tier-tp8": (_NEXT, ("--tp-size", "8"), _MID_TIER_MIB, ()),
    "mid-tier-mrr": (_NEXT, ("--tp-size", "4", "--max-running-requests", "16"), _MID_TIER_MIB, ()),
    "mrr-below-dp": (_NEXT, ("--tp-size", "4", "--enable-dp-attention", "--dp", "4", "--max-running-requests", "2",
                             "--disable-radix-cache"), H200_MIB, ()),
    "attn-dp-spec": (_NEXT, ("--tp-size", "4", "--enable-dp-attention", "--dp", "2", "--speculative-algorithm",
                             "EAGLE", "--max-running-requests", "64"), H200_MIB, ()),
    "dflash-attn-dp": ("Qwen/Qwen3.5-27B", ("--tp-size", "4", "--enable-dp-attention", "--dp", "2",
                                            "--enable-dp-lm-head", "--speculative-algorithm", "DFLASH",
                                            "--speculative-draft-model-path", "SpecForge/qwen3.5-27b-dflash"),
                       H200_MIB, ()),
    "pd-prefill-mtp": (_NEXT, ("--tp-size", "4", "--disaggregation-mode", "prefill", "--speculative-algorithm",
                               "EAGLE", "--max-running-requests", "8"), H200_MIB, ()),
    "pathless-mtp-draft-kv": ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", ("--tp-size", "4",
                                                                               "--speculative-algorithm", "NEXTN"),
                              H200_MIB, ()),
    "pp-breakable-graph": (_NEXT, ("--tp-size", "4", "--pp-size", "2"), H200_MIB, ()),
    "pp-breakable-graph-opt-in": (_NEXT, ("--tp-size", "4", "--pp-size", "2", "--cuda-graph-backend-prefill",
                                          "breakable", "--chunked-prefill-size", "32768"), H200_MIB, ()),
    "kda-breakable-graph": ("moonshotai/Kimi-Linear-48B-A3B-Instruct", ("--tp-size", "4"), H200_MIB, ()),
    "replayssm-gdn-ring": ("Qwen/Qwen3.5-27B", ("--tp-size", "2", "--enable-linear-replayssm-spec",
                                                "--linear-attn-decode-backend", "triton", "--speculative-algorithm",
                                                "NEXTN", "--max-running-requests", "32",
                                                "--mamba-radix-cache-strategy", "no_buffer",
                                                "--disable-overlap-schedule"), H200_MIB, ()),
    "pure-ssm": ("synthetic/mamba2-2.7b", (), H200_MIB, ()),
    "dspark-pp-pd-prefill": ("Qwen/Qwen3.8-27B", ("--tp-size", "2", "--pp-size", "2", "--disaggregation-mode",
                                                  "prefill", "--speculative-algorithm", "DSPARK",
                                                  "--speculative-draft-model-path", "RadixArk/Qwen3.8-27B-DSpark",
                                                  "--max-running-requests", "8"), H200_MIB, ()),
    "post-capture": (_NEXT, ("--tp-size", "4"), H200_MIB, _POST_CAPTURE),
    "post-capture-capped-full-prefill": (_NEXT, ("--tp-size", "4", "--disaggregation-mode", "prefill",
                                                 "--cuda-graph-config", _FULL_PREFILL, "--prefill-max-requests", "4",
                                                 "--max-mamba-cache-size", "64"), H200_MIB, _POST_CAPTURE),
    "removed-cuda-graph-bs": (_NEXT, ("--tp-size", "4", "--cuda-graph-bs", "1", "2", "4"), H200_MIB, ()),
    "added-attn-dp-size": (_NEXT, ("--tp-size", "4", "--attn-dp-size", "2"), H200_MIB, ()),
}


def release_scenarios(models: dict[str, ModelDir]) -> list[Scenario]:
    """RELEASE_CASES as scenarios (draft ids become their materialized directories), sized on a roomy profile."""
    out = []
    for name, (key, flags, gpu_mib, env) in RELEASE_CASES.items():
        argv = tuple(models[f].path if f in models else f for f in flags)
        pre = round(gpu_mib * GIB_PER_MIB * 0.98, 4)
        out.append(Scenario(id=f"release-{name}", model=key, argv=("--model-path", models[key].path, *argv),
                            env=env, gpu_mib=gpu_mib, pre_load_gib=pre, available_gib=round(pre * 0.45, 4),
                            tags=("release", name)))
    return out

