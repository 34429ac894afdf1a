"""sglang behind the one protocol the surfaces ask (engine.api.ServingEngine): explain, plan, logs, ratio and compare
answer in sglang's terms, from its serving modules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from hybridplan.engine.registry import FlagRegistry
from hybridplan.engine.requests import CompareLaunch, CompareLeg, CompareRequest, ExplainRequest, LaunchSettings, LogCheckRequest, PlanRequest, RatioRequest
from hybridplan.engine.sglang.serving.loading import launch
from hybridplan.engine.sglang.releases import NAME, for_version
from hybridplan.errors import BadInput

if TYPE_CHECKING:  # the fleet's types are built only where a fleet is planned
    from hybridplan.engine.fleet_requests import FleetLaunch, FleetLayout, FleetRequest
    from hybridplan.evidence import EvidencePoint

LAYOUT = "state_and_kv_pools"  # a state pool of S-slot requests and a KV pool of tokens, both fixed at startup
EXPLAIN_OPTIONS = frozenset({"command", "gpu", "gpu_memory_gib", "pool_budget_gib", "available_gib", "pre_load_gib",
                             "weights_gib", "hub", "expand_home"})
PLAN_OPTIONS = frozenset({"request_length", "concurrency", "command", "model", "gpu", "gpu_memory_gib", "quant", "spec",
                          "draft", "tp", "extra", "max_mem_fraction", "pin", "weights_gib", "hub"})
LOG_OPTIONS = frozenset({"log", "command", "log_version", "engine_version", "expand_home"})
NO_COMMAND = ("no launch command given; put it after `--`, e.g. "
              "`hybridplan explain -- python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B`")
ENV_PREFIX = "SGLANG_"  # the environment variables sglang's rules read (envs.py: every one is SGLANG_*)


@dataclass(frozen=True)
class SglangServing:
    """One sglang release as the surfaces see it."""

    version: str

    @property
    def name(self) -> str:
        return NAME

    @property
    def display_name(self) -> str:
        return "SGLang"

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

    def launches(self, command: str | tuple[str, ...]) -> bool:
        from hybridplan.engine.program import match_program, program_words
        from hybridplan.engine.sglang.command import PROGRAMS

        return match_program(program_words(command), PROGRAMS) is not None

    def model_refs(self, command: str | tuple[str, ...]) -> tuple[str | None, str | None]:
        from hybridplan.engine.sglang.serving.loading import model_refs

        return model_refs(launch(command), self.version)

    def workload(self, command: str | tuple[str, ...]) -> tuple[int | None, int | None]:
        """--context-length (else the model's, as resolved) and --max-running-requests where the launch sets it
        (else the engine sizes it from the pools at startup)."""
        from hybridplan.engine.sglang.serving.loading import load

        args = load(launch(command), version=self.version).args
        cap = args["max_running_requests"] if args.explicit("max_running_requests") else None
        return int(args["context_length"]), None if cap is None else int(cap)

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        return {k: v for k, v in environ.items() if k.startswith(ENV_PREFIX)}

    def launch_evidence(self, command: str, gpu: str, *, kind: str, label: str, source: str,
                        outcome: Literal["served", "failed"], phase: str | None) -> EvidencePoint:
        from hybridplan.engine.sglang.serving.evidence import launch_point

        return launch_point(self.version, command, gpu, kind=kind, label=label, source=source, outcome=outcome,
                            phase=phase)

    def explain(self, req: ExplainRequest) -> dict[str, Any]:
        from hybridplan.engine.sglang.serving.explain import explain

        if not req.command:
            raise BadInput(NO_COMMAND)
        card = None
        if req.gpu is not None or req.gpu_memory_gib is not None:  # the GPU catalog (pydantic) only for a card
            from hybridplan.hardware.catalog import from_options

            card = from_options(req.gpu, req.gpu_memory_gib)
        return explain(launch(req.command, req.expand_home), budget=req.pool_budget_gib, version=self.version,
                       gpu=card, available_gib=req.available_gib, pre_load_gib=req.pre_load_gib,
                       weights_gib=req.weights_gib, hub=req.hub, evidence=req.evidence)

    def plan(self, req: PlanRequest) -> dict[str, Any]:
        from hybridplan.engine.sglang.serving.plan import plan, target_from_options

        given = req.command if req.command is not None else req.extra
        target = target_from_options(model=req.model, gpu=req.gpu, gpu_memory_gib=req.gpu_memory_gib,
                                     request_length=req.request_length, concurrency=req.concurrency, quant=req.quant,
                                     spec=req.spec, draft=req.draft, tp=req.tp,
                                     extra=given if isinstance(given, str) or given is None else list(given),
                                     max_mem_fraction=req.max_mem_fraction, pin=req.pin, weights_gib=req.weights_gib,
                                     hub=req.hub, version=self.version, measured=req.measured, evidence=req.evidence)
        return plan(target)

    def writes(self, text: str) -> bool:
        from hybridplan.engine.sglang.logparse import OWN_LINES

        return any(line in text for line in OWN_LINES)

    def parse_log(self, text: str, name: str = "log") -> dict[str, Any]:
        from hybridplan.engine.sglang.logparse import nothing_found, parse_log

        boot = parse_log(text, name=name)
        if boot.found_nothing():
            raise nothing_found(name)
        return boot.as_dict() | {"missing": boot.missing()}

    def check_log(self, req: LogCheckRequest, name: str = "log") -> dict[str, Any]:
        from hybridplan.engine.sglang.logparse import nothing_found, parse_log
        from hybridplan.engine.sglang.serving.logcheck import check_log

        if not req.command:
            raise BadInput("command: the launch command that wrote the log is required for an sglang log (on the "
                           "command line: after `--`)")
        boot = parse_log(req.log, name=name)
        if boot.found_nothing():
            raise nothing_found(name)
        return check_log(boot, launch(req.command, req.expand_home), log_version=req.log_version,
                         version=req.engine_version)

    def ratio(self, req: RatioRequest) -> dict[str, Any]:
        from hybridplan.engine.sglang.serving.ratio import balanced_ratio
        from hybridplan.hardware.catalog import from_options

        if not req.command:
            raise BadInput(NO_COMMAND)
        return balanced_ratio(launch(req.command, req.expand_home), request_length=req.request_length,
                              concurrency=req.concurrency, budget=req.pool_budget_gib,
                              gpu=from_options(req.gpu, req.gpu_memory_gib), version=self.version)

    def launch_settings(self, command: str | tuple[str, ...]) -> LaunchSettings:
        from hybridplan.engine.sglang.serving.compare import settings

        return settings(self, command)

    def compare_launch(self, req: CompareRequest) -> CompareLaunch:
        """The launch `compare` runs: the user's own where it is this engine's, else the shared settings carried
        over (the model at the length, TP and KV dtype, the rest at the release's defaults)."""
        from hybridplan.engine.sglang.serving.compare import compare_launch

        return compare_launch(self, req)

    def compare_leg(self, req: CompareRequest) -> CompareLeg:
        from hybridplan.engine.sglang.serving.compare import leg

        return leg(self, req)


    def fleet_layouts(self, req: FleetRequest) -> list[FleetLayout]:
        from hybridplan.engine.sglang.serving.fleet import layouts

        return layouts(req, self.version)

    def fleet_launch(self, req: FleetRequest, layout: FleetLayout, servers: Mapping[str, int]) -> FleetLaunch:
        from hybridplan.engine.sglang.serving.fleet_launch import launch

        return launch(req, layout, servers, self.version)

def serving(version: str | None = None) -> SglangServing:
    """The release `version` (the newest modelled when None); BadInput names the modelled ones."""
    return SglangServing(for_version(version).version)
