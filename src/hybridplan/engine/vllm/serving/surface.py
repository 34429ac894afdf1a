"""vLLM behind the one protocol the surfaces ask (engine.api.ServingEngine): explain, plan, logs and compare answer
in vLLM's terms (one paged pool of attention and state pages), from its serving modules."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hybridplan.engine.registry import FlagRegistry
from hybridplan.engine.requests import (CompareLaunch, CompareLeg, CompareRequest, ExplainRequest, LaunchSettings,
                                        LogCheckRequest, PlanRequest, RatioRequest)
from hybridplan.engine.vllm.engine import for_version
from hybridplan.errors import BadInput
from hybridplan.limits import MAX_UTIL_PROPOSED

LAYOUT = "paged_pool"  # attention KV and recurrent state pages in one pool of blocks
EXPLAIN_OPTIONS = frozenset({"command", "gpu", "gpu_memory_gib", "kv_memory_gib", "others_gib"})
PLAN_OPTIONS = frozenset({"request_length", "concurrency", "command", "gpu", "gpu_memory_gib", "kv_memory_gib",
                          "max_util"})
LOG_OPTIONS = frozenset({"log", "command", "engine_version", "gpu", "log_version"})  # log_version: refused by name


def text_of(command: str | tuple[str, ...]) -> str:
    """The launch as one string (the shell's tokens joined back), as vLLM's parser takes it."""
    return command if isinstance(command, str) else (command[0] if len(command) == 1 else shlex.join(command))


@dataclass(frozen=True)
class VllmServing:
    """One vLLM release as the surfaces see it."""

    version: str

    @property
    def name(self) -> str:
        return "vllm"

    @property
    def display_name(self) -> str:
        return "vLLM"

    @property
    def layout(self) -> str:
        return LAYOUT

    @property
    def rules_package(self) -> str:
        return for_version(self.version).rules_package

    def registry(self) -> FlagRegistry:
        return for_version(self.version).registry()

    def takes(self, surface: str) -> frozenset[str]:
        return {"explain": EXPLAIN_OPTIONS, "plan": PLAN_OPTIONS, "logs": LOG_OPTIONS}.get(surface, frozenset())

    def model_refs(self, command: str | tuple[str, ...]) -> tuple[str | None, str | None]:
        model = for_version(self.version).parse_command(text_of(command)).values.get("model")
        return (str(model) if model else None), None

    def workload(self, command: str | tuple[str, ...]) -> tuple[int | None, int | None]:
        """--max-model-len (else the model's, as resolved; None for `auto`, which vLLM fits at startup) and
        --max-num-seqs where the launch sets it."""
        from hybridplan.engine.vllm.serving.launch import card, resolve_on
        from hybridplan.models.loader import load_model

        engine = for_version(self.version)
        cmd = engine.parse_command(text_of(command))
        model = cmd.values.get("model")
        if not model:
            raise BadInput("the vLLM command names no model (`vllm serve MODEL` or --model)")
        args = resolve_on(engine, cmd, load_model(str(model)), card(None))
        seqs = cmd.values.get("max_num_seqs")
        return None if args.auto_fit else args.max_model_len, None if seqs is None else int(seqs)

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """None: vLLM's rules here read no environment variable."""
        return {}

    def explain(self, req: ExplainRequest) -> dict[str, Any]:
        from hybridplan.engine.vllm.serving.explain import explain_vllm

        if not req.command:
            raise BadInput("no launch command given; put it after `--`, e.g. "
                           "`hybridplan explain --engine vllm --kv-memory-gib 40 -- vllm serve Qwen/Qwen3.5-27B`")
        return explain_vllm(text_of(req.command), version=self.version, kv_memory_gib=req.kv_memory_gib, gpu=req.gpu,
                            others_gib=req.others_gib, gpu_memory_gib=req.gpu_memory_gib)

    def plan(self, req: PlanRequest) -> dict[str, Any]:
        from hybridplan.engine.vllm.serving.launch import VllmTarget, card, on_card
        from hybridplan.engine.vllm.serving.plan import plan_vllm

        if not req.command:
            raise BadInput("command: the vLLM launch to plan (vllm serve MODEL ...) is required with `engine: vllm`"
                           " (on the command line: after `--`)")
        target = VllmTarget(command=text_of(req.command), kv_memory_gib=req.kv_memory_gib,
                            card=card(req.gpu, memory_gib=req.gpu_memory_gib), request_length=req.request_length,
                            concurrency=req.concurrency,
                            max_util=MAX_UTIL_PROPOSED if req.max_util is None else req.max_util)
        return plan_vllm(target, self.version, on_card(req.gpu, req.gpu_memory_gib))

    def parse_log(self, text: str, name: str = "log") -> dict[str, Any]:
        from dataclasses import asdict

        from hybridplan.engine.vllm.serving.logcheck import parse_vllm_log
        from hybridplan.engine.vllm.serving.memory_log import parse_memory

        return {"capacity": asdict(parse_vllm_log(text)), "memory": asdict(parse_memory(text))}

    def check_log(self, req: LogCheckRequest, name: str = "log") -> dict[str, Any]:
        from hybridplan.engine.vllm.serving.logcheck import check_vllm_log

        if req.log_version is not None:
            raise BadInput("log_version: an sglang build; vLLM's log states its release (use engine_version)")
        launch = text_of(req.command) if req.command else None
        return check_vllm_log(req.log, launch, gpu=req.gpu, version=req.engine_version)

    def ratio(self, req: RatioRequest) -> dict[str, Any]:
        raise BadInput("ratio: vLLM has no state-pool ratio (its state pages come out of the one paged pool); "
                       "`plan --engine vllm` sizes a launch for a workload")

    def launch_settings(self, command: str | tuple[str, ...]) -> LaunchSettings:
        from hybridplan.engine.vllm.serving.compare import settings

        return settings(self, text_of(command))

    def compare_launch(self, req: CompareRequest) -> CompareLaunch:
        """The launch `compare` runs: the user's own where it is this engine's, else the shared settings carried
        over (the model at the length, TP and KV dtype, the rest at the release's defaults)."""
        from hybridplan.engine.vllm.serving.compare import compare_launch

        return compare_launch(self, req)

    def compare_leg(self, req: CompareRequest) -> CompareLeg:
        from hybridplan.engine.vllm.serving.compare import leg

        return leg(self, req)


def serving(version: str | None = None) -> VllmServing:
    """The release `version` (the newest modelled when None); BadInput names the modelled ones."""
    return VllmServing(for_version(version).version)
