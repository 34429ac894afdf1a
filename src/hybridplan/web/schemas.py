"""Request bodies of the JSON API: every field bounded, so no request can ask for unbounded work."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from annotated_types import Interval
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from hybridplan.engine.requests import FIELD_BOUNDS
from hybridplan.limits import MAX_UTIL_PROPOSED
from hybridplan.limits import WEB_MAX_LOG_CHARS

MAX_COMMAND_CHARS = 16_384
MAX_LOG_CHARS = WEB_MAX_LOG_CHARS
MAX_BUDGET_GIB = 1e5  # far above any card; the engine model takes negative budgets (it refuses them itself)
VERSION_PATTERN = r"^[0-9A-Za-z._-]{1,32}$"
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"  # page, dimension, option and GPU ids
MAX_PICKS = 32
MAX_TOKENS = 10_000_000  # request length: far above any context window
MAX_CONCURRENCY = 1_000_000
MAX_UPLOAD_CONFIG_BYTES = 128 * 1024  # a config.json sent with a request (compact); the largest bundled is 88 KB


def _within(name: str) -> Interval:
    """A request field's range as engine/requests.py's FIELD_BOUNDS defines it (the CLI and the engines hold the
    same one), as a pydantic constraint."""
    b = FIELD_BOUNDS[name]
    return Interval(gt=b.lo if b.lo_open else None, ge=None if b.lo_open else b.lo, le=b.hi)


KvMemoryGib = Annotated[float, _within("kv_memory_gib")]


class _Strict(BaseModel):
    """No unknown fields, no coercion (true is not 1, "5" is not 5), finite numbers only."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)


class LogParseRequest(_Strict):
    """`hybridplan logs parse --json <log>`."""

    log: str = Field(min_length=1, max_length=MAX_LOG_CHARS, description="The server's boot log text.")
    engine: Literal["sglang", "vllm"] = Field("sglang", description="The engine that wrote the log (--engine).")


class LogCheckRequest(LogParseRequest):
    """`hybridplan logs check --json <log> [--log-version V] [--engine-version V] -- <command>`; with `engine: vllm`,
    `logs check --engine vllm --json [--gpu G] <log> [-- <vllm command>]` (the command may be left out: the log's
    `non-default args:` line is the launch)."""

    command: str | None = Field(None, min_length=1, max_length=MAX_COMMAND_CHARS,
                                description="The command the server ran (required for sglang).")
    log_version: str | None = Field(None, max_length=120, description="The sglang build that wrote the log.")
    engine_version: str | None = Field(None, pattern=VERSION_PATTERN, description="Engine version to model.")
    gpu: str | None = Field(None, pattern=ID_PATTERN, description="vLLM: the card the log is from (its compute "
                            "capability picks the GDN prefill kernel); default an sm90 card.")


Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
PlaceholderKey = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")]
PlaceholderValue = Annotated[str, StringConstraints(max_length=256)]
SetFlag = Annotated[str, StringConstraints(pattern=r"^--[a-z0-9][a-z0-9-]{0,63}( [^\s]{1,128})?$")]
SetEnv = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}=[^\s]{0,256}$")]
MAX_SET_FLAGS = 8


class RenderRequest(_Strict):
    """`hybridplan cookbook render --json PAGE --<dim> <option> ... [--docker] [--placeholder K=V] [--no-ratio]`.

    `request_length`/`concurrency` replace the page's calculator workload (the Calculator panel's L and C); left out,
    the page's own workload is used, exactly as the CLI does.
    """

    page: Id = Field(description="A bundled cookbook page id (`cookbook list`).")
    picks: dict[Id, Id] = Field(default_factory=dict, max_length=MAX_PICKS,
                                description="Dimension id -> option id (`hw`, match and overlay dims).")
    docker: bool = Field(False, description="The docker run form instead of pip.")
    placeholders: dict[PlaceholderKey, PlaceholderValue] = Field(default_factory=dict, max_length=MAX_PICKS,
                                                                 description="{{KEY}} placeholder values.")
    no_ratio: bool = Field(False, description="Leave the calculator's ratio out (the raw recipe).")
    request_length: int | None = Field(None, ge=1, le=MAX_TOKENS, description="Calculator L (tokens per request).")
    concurrency: int | None = Field(None, ge=1, le=MAX_CONCURRENCY, description="Calculator C (concurrent requests).")
    set_flags: list[SetFlag] = Field(default_factory=list, max_length=MAX_SET_FLAGS,
                                     description="Flags (`--flag value`) that replace their family in the command: "
                                                 "the answer's `effective` command (the Calculator's C).")
    set_env: list[SetEnv] = Field(default_factory=list, max_length=MAX_SET_FLAGS,
                                  description="Env entries (`KEY=VALUE`) for the `effective` command only: the "
                                              "calculator reads each command with its own env (`cookbook render "
                                              "--add-env`).")
    engine_version: str | None = Field(None, pattern=VERSION_PATTERN,
                                       description="Model the page with this sglang release (default: the page's own).")


class _OnGpu(_Strict):
    gpu: Id | None = Field(None, description="A GPU catalog id (rtx5090, h100-80gb, h200, ...).")
    gpu_memory_gib: float | None = Field(None, gt=0, le=MAX_BUDGET_GIB,
                                         description="Override the GPU's memory (GiB); alone: a generic CUDA card.")


def _bounded_config(config: dict[str, Any]) -> dict[str, Any]:
    """An uploaded config.json: at most MAX_UPLOAD_CONFIG_BYTES once written compactly."""
    size = len(json.dumps(config, separators=(",", ":")).encode())
    if size > MAX_UPLOAD_CONFIG_BYTES:
        raise ValueError(f"config.json over {MAX_UPLOAD_CONFIG_BYTES:,} bytes ({size:,})")
    return config


ConfigUpload = Annotated[dict[str, Any], AfterValidator(_bounded_config)]


class _WithModel(_OnGpu):
    config: ConfigUpload | None = Field(None, description="The model's config.json as a JSON object, instead of "
                                        "one the server reads: the request's model reference names it.")
    draft_config: ConfigUpload | None = Field(None, description="The draft checkpoint's config.json, named by the "
                                              "request's draft reference (--speculative-draft-model-path).")


class ExplainRequest(_WithModel):
    """`hybridplan explain --json [--pool-budget-gib X | --gpu G | --available-gib A --pre-load-gib P] -- <command>`;
    with `engine: vllm`, `explain --engine vllm --json [--kv-memory-gib X] [--gpu G] -- <vllm command>`.

    The web never reads the Hub (`--hub`): weights come from allowed checkpoints, the catalog or the estimate. Models
    resolve as catalog ids, Hub ids in the server's HF cache, paths under `serve --allow-path` dirs, or `config`.
    """

    command: str = Field(min_length=1, max_length=MAX_COMMAND_CHARS,
                         description="The launch command as typed (env assignments, program, flags); "
                                     "backslash-newline continuations are joined.",
                         examples=["python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B "
                                   "--mem-fraction-static 0.85"])
    pool_budget_gib: float | None = Field(None, ge=-MAX_BUDGET_GIB, le=MAX_BUDGET_GIB,
                                          description="The engine's total_rest_memory in GiB (--pool-budget-gib).")
    available_gib: float | None = Field(None, gt=0, le=MAX_BUDGET_GIB, description="Free GiB after the weights "
                                        "(the boot log's last 'Load weight end' avail mem).")
    pre_load_gib: float | None = Field(None, gt=0, le=MAX_BUDGET_GIB, description="Free GiB before the weights "
                                       "(the first 'Load weight begin' avail mem).")
    weights_gib: float | None = Field(None, gt=0, le=MAX_BUDGET_GIB, description="Target weights per GPU (GiB), "
                                      "instead of an estimate.")
    engine_version: str | None = Field(None, pattern=VERSION_PATTERN, description="Engine version to model.")
    engine: Literal["sglang", "vllm"] = Field("sglang", description="The engine the command launches (--engine): "
                                              "vllm takes `vllm serve MODEL ...`, the api_server module or a "
                                              "`non-default args:` line, with `kv_memory_gib` and `gpu` only.")
    kv_memory_gib: KvMemoryGib | None = Field(None, description="vLLM: the boot log's 'Available "
                                        "KV cache memory' (GiB, --kv-memory-gib); left out, the sizing is null.")


class CompareRequest(_Strict):
    """`hybridplan compare --json --model M [--memory-gib X] -L L [--tp N] [--kv-cache-dtype auto|fp8] [--gpu G]
    [--gpu-memory-gib X] [--vllm-version V]`, or from a whole launch: `compare --json [--engine E] -L L --gpu G --
    <launch>` (`command`, instead of `model`, `tp` and `kv_cache_dtype`)."""

    model: str | None = Field(None, min_length=1, max_length=256, description="Model id (catalog, HF cache) or an "
                              "allowed path. Not with `command`.")
    command: str | None = Field(None, min_length=1, max_length=MAX_COMMAND_CHARS, description="A launch of "
                                "`engine` (the Deploy command): run as typed on its engine, its settings carried to "
                                "the others, each leg saying what it carried and could not.")
    engine: Literal["sglang", "vllm"] = Field("sglang", description="The engine `command` launches (--engine).")
    gpu_memory_gib: float | None = Field(None, gt=0, le=MAX_BUDGET_GIB,
                                         description="Override the GPU's memory (GiB); alone: a generic CUDA card.")
    memory_gib: Annotated[float, _within("memory_gib")] | None = Field(None, description="Cache memory per rank (GiB): SGLang's "
                                     "pool budget and vLLM's available KV memory. Left out, `gpu` sizes each engine "
                                     "from the card's memory timeline.")
    request_length: int = Field(ge=1, le=MAX_TOKENS, description="Tokens per request (each engine's context length).")
    tp: int = Field(1, ge=1, le=1024, description="Tensor parallel size.")
    kv_cache_dtype: Literal["auto", "fp8"] = Field("auto", description="KV cache dtype (each engine's spelling).")
    gpu: Id | None = Field(None, description="A GPU catalog id: its platform (SGLang) and sm (vLLM's GDN kernel).")
    vllm_version: str | None = Field(None, pattern=VERSION_PATTERN, description="The vLLM release to model "
                                     "(--vllm-version; default 0.33.0, engine.api.default_release).")
    sglang_version: str | None = Field(None, pattern=VERSION_PATTERN, description="The SGLang release (or the build "
                                       "a page pins) to model (--sglang-version; default the newest modelled).")


class PlanRequest(_WithModel):
    """`hybridplan plan --json --gpu G -L L -C C -- <launch command>` (`command`), or `plan --json --model M --gpu G
    -L L -C C [--quant Q] [--spec S] ... [-- <extra flags>]` (`model`); with `engine: vllm`, `plan --engine vllm
    --json --gpu G [--kv-memory-gib A] -L L -C C [--max-util U] [--engine-version V] -- <vllm command>`."""

    command: str | None = Field(None, min_length=1, max_length=MAX_COMMAND_CHARS, description="The launch command to "
                                "answer with the fewest changes (it names the model with --model-path; every other "
                                "flag and env assignment is kept unless it must change). Not with `model`.")
    model: str | None = Field(None, min_length=1, max_length=256, description="Model id (catalog, HF cache), an allowed "
                              "path, or the name `config` is sent under: plan the catalog's command for it.")
    request_length: int = Field(ge=1, le=MAX_TOKENS, description="Average tokens per request (input + output).")
    concurrency: int = Field(ge=1, le=MAX_CONCURRENCY, description="Concurrent requests to serve.")
    quant: Id | None = Field(None, description="bf16, fp8, nvfp4 or nvfp4-bf16-head picks the checkpoint; auto-round, gptq, awq or compressed-tensors a community INT4 export.")
    spec: Id | None = Field(None, description="none, mtp (eagle/nextn), dspark, dflash, ngram.")
    draft: str | None = Field(None, max_length=256, description="Draft checkpoint for dspark/dflash/eagle3.")
    tp: int = Field(1, ge=1, le=1024, description="Tensor parallel size.")
    max_mem_fraction: float | None = Field(None, gt=0, lt=1, description="Use this --mem-fraction-static instead "
                                           "of the highest safe one within the evidence.")
    pin: bool = Field(False, description="Size the state pool with --max-mamba-cache-size, not a ratio.")
    weights_gib: float | None = Field(None, gt=0, le=MAX_BUDGET_GIB, description="Target weights per GPU (GiB).")
    extra: str | None = Field(None, max_length=MAX_COMMAND_CHARS, description="With `model`: extra env assignments "
                              "and flags for the catalog command (what follows `--`).")
    engine_version: str | None = Field(None, pattern=VERSION_PATTERN, description="Engine version to model.")
    engine: Literal["sglang", "vllm"] = Field("sglang", description="The engine the launch is for (--engine): vllm "
                                              "takes `command` (`vllm serve MODEL ...`), `gpu`, `kv_memory_gib`, "
                                              "`max_util`, L, C and `engine_version` only.")
    kv_memory_gib: KvMemoryGib | None = Field(None, description="vLLM: the measured boot's 'Available "
                                        "KV cache memory' (GiB, --kv-memory-gib) at the launch's utilization; left "
                                        "out, the KV memory is estimated from the card alone.")
    max_util: Annotated[float, _within("max_util")] = Field(MAX_UTIL_PROPOSED, description="vLLM: the highest --gpu-memory-utilization to propose "
                            "(--max-util, the CLI's default 0.95).")


class RatioRequest(_WithModel):
    """`hybridplan ratio --json -L L -C C [--pool-budget-gib X] [--gpu G] -- <command>`."""

    command: str = Field(min_length=1, max_length=MAX_COMMAND_CHARS, description="The launch command.")
    request_length: int = Field(ge=1, le=MAX_TOKENS, description="Average tokens per request (input + output).")
    concurrency: int = Field(ge=1, le=MAX_CONCURRENCY, description="Concurrent requests to serve.")
    pool_budget_gib: float | None = Field(None, ge=-MAX_BUDGET_GIB, le=MAX_BUDGET_GIB,
                                          description="The engine's total_rest_memory (GiB).")
    engine_version: str | None = Field(None, pattern=VERSION_PATTERN, description="Engine version to model.")
    engine: Literal["sglang", "vllm"] = Field("sglang", description="The engine the command launches (--engine).")


MAX_WEB_GPUS_PER_NODE = 16  # bounds the layouts one request enumerates (servers up to 4 nodes of this many cards)


class FleetRequest(_Strict):
    """`hybridplan fleet --json --model M --gpu G -L L -C C [--gpus-available N] [--gpus-per-node K] [--engine E]
    [--sglang-version V] [--vllm-version V] [--pick R]`."""

    model: str = Field(min_length=1, max_length=256, description="Model id (catalog, HF cache) or an allowed path.")
    gpu: Id = Field(description="A GPU catalog id: every server's card.")
    request_length: int = Field(ge=1, le=MAX_TOKENS, description="Tokens per session (L).")
    concurrency: int = Field(ge=1, le=MAX_CONCURRENCY, description="Concurrent sessions to serve (C).")
    gpus_available: int | None = Field(None, ge=1, le=1024, description="GPUs the fleet may take (--gpus-available).")
    gpus_per_node: int = Field(8, ge=1, le=MAX_WEB_GPUS_PER_NODE, description="Cards in one node: a larger server "
                               "spans nodes (--gpus-per-node).")
    engine: Literal["sglang", "vllm", "both"] = Field("both", description="Which engines' layouts to rank (--engine).")
    sglang_version: str | None = Field(None, pattern=VERSION_PATTERN, description="The SGLang release to model.")
    vllm_version: str | None = Field(None, pattern=VERSION_PATTERN, description="The vLLM release to model.")
    pick: int | None = Field(None, ge=1, le=10_000, description="Launch this row instead of the first that serves.")
