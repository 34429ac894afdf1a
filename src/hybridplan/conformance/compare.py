"""Field-by-field comparison of an engine's answers with hybridplan's, each drift naming the hybridplan rule behind
the field, and the tallies a report prints (per family, per outcome: branch or refusal, per sampled tag)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Answer = Mapping[str, Any]  # one scenario's result in the engine's schema: its id, the fields, or `error`


@dataclass(frozen=True, kw_only=True)
class Case:
    """One scenario as both sides see it: what the driver reads, hybridplan's answer, and what a tally counts."""

    id: str
    payload: Mapping[str, Any]  # the scenario as the engine's driver reads it
    predicted: Answer  # hybridplan's answer, in the driver's result schema
    family: str  # the model family (and architecture) it runs
    tags: tuple[str, ...] = ()  # what was sampled


@dataclass(frozen=True, kw_only=True)
class Drift:
    """One field where hybridplan and the engine disagree."""

    scenario: str
    field: str
    engine: object
    hybridplan: object
    rule: str

    def as_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "field": self.field, "engine": self.engine, "hybridplan": self.hybridplan,
                "rule": self.rule}


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """How one engine's answers are compared: which fields, the hybridplan rule behind each, when two refusals are
    the same."""

    fields: Callable[[Answer], dict[str, Any]]  # an answer's compared fields by name (a refusal: those reached first)
    rules: Mapping[str, str]  # field, or its section (the name before the first dot) -> the hybridplan rule
    same_refusal: Callable[[Answer, Answer], bool]  # the engine's error and hybridplan's
    gate: tuple[str, ...] = ()  # compared first; a drift there is the only one reported (nothing after it compares)

    def rule_for(self, name: str) -> str:
        if name in self.rules:
            return self.rules[name]
        return self.rules.get(name.split(".")[0], "?")


def compare(engine: Answer, ours: Answer, how: Comparison) -> list[Drift]:
    """Every field the engine reported that hybridplan disagrees on (fields hybridplan does not hold are skipped),
    and a refusal one side makes and the other does not, or makes differently."""
    sid = str(engine.get("id", "?"))
    for name in how.gate:
        if engine.get(name) != ours.get(name):
            return [Drift(scenario=sid, field=name, engine=engine.get(name), hybridplan=ours.get(name),
                          rule=how.rule_for(name))]
    drifts = _refusal_drift(sid, engine.get("error"), ours.get("error"), how)
    mine = how.fields(ours)
    for name, value in how.fields(engine).items():
        if name in mine and mine[name] != value:
            drifts.append(Drift(scenario=sid, field=name, engine=value, hybridplan=mine[name], rule=how.rule_for(name)))
    return drifts


def _refusal_drift(sid: str, eng: Answer | None, mod: Answer | None, how: Comparison) -> list[Drift]:
    if eng is None and mod is None:
        return []
    if eng is None or mod is None:
        rule = (mod.get("rule") if mod is not None else None) or how.rule_for(str((eng or mod or {}).get("stage",
                                                                                                       "error")))
        return [Drift(scenario=sid, field="error", engine=eng, hybridplan=mod, rule=rule)]
    if how.same_refusal(eng, mod):
        return []
    return [Drift(scenario=sid, field="error", engine={"type": eng["type"], "message": eng["message"]},
                  hybridplan={"type": mod["type"], "message": mod["message"]}, rule=mod.get("rule") or "?")]


KeyOf = Callable[[Case, Answer], "str | None"]  # the key a scenario counts under (None: not counted)


def tally(cases: Iterable[Case], answers: Mapping[str, Answer], outcome: Callable[[Answer], str],
          counters: Mapping[str, KeyOf] | None = None) -> dict[str, Counter[str]]:
    """Counters per family, per outcome (the branch an answer took, or its refusal), per sampled tag, and each of
    `counters`."""
    out: dict[str, Counter[str]] = {"family": Counter(), "outcome": Counter(), "tag": Counter()}
    out |= {name: Counter() for name in counters or {}}
    for case in cases:
        answer = answers.get(case.id) or {"id": case.id, "error": {"stage": "missing", "type": "?", "message": ""}}
        out["family"][case.family] += 1
        out["outcome"][outcome(answer)] += 1
        for tag in case.tags:
            out["tag"][tag] += 1
        for name, key_of in (counters or {}).items():
            key = key_of(case, answer)
            if key is not None:
                out[name][key] += 1
    return out


@dataclass(frozen=True, kw_only=True)
class Report:
    """One release's answers compared with hybridplan's: the driver's header, the scenarios, every drift, the
    tallies."""

    engine: Mapping[str, Any]  # the driver's header: engine, version, python
    cases: list[Case]
    drifts: list[Drift]
    counts: dict[str, Counter[str]] = field(default_factory=dict)

    @property
    def drifted_rules(self) -> Counter[str]:
        return Counter(d.rule for d in self.drifts)

    @property
    def drifted_scenarios(self) -> int:
        return len({d.scenario for d in self.drifts})

    def drift_lines(self, limit: int = 40) -> list[str]:
        """The first `limit` drifts, one line each (what a failing test shows)."""
        return [f"{d.scenario} {d.field}: engine {d.engine!r} != hybridplan {d.hybridplan!r} ({d.rule})"
                for d in self.drifts[:limit]]

    def as_dict(self) -> dict[str, Any]:
        return {"engine": dict(self.engine), "scenarios": len(self.cases), "drifted_scenarios": self.drifted_scenarios,
                "drifted_rules": dict(self.drifted_rules), "drifts": [d.as_dict() for d in self.drifts],
                "tally": {k: dict(sorted(v.items())) for k, v in self.counts.items()}}


def report(header: Mapping[str, Any], cases: list[Case], answers: Mapping[str, Answer], how: Comparison,
           outcome: Callable[[Answer], str], counters: Mapping[str, KeyOf] | None = None) -> Report:
    """Every case's engine answer compared with hybridplan's, and the tallies."""
    drifts = [d for case in cases for d in compare(answers[case.id], case.predicted, how)]
    return Report(engine=header, cases=cases, drifts=drifts, counts=tally(cases, answers, outcome, counters))
