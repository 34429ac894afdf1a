"""The cookbook's view of the engine model: a composed flag list as a LaunchCommand, resolved for the page's
pinned engine version, and the speculative-decoding banners read off the resolution."""

from __future__ import annotations

import shlex
from functools import lru_cache
from typing import TYPE_CHECKING, Mapping

from hybridplan.cookbook.compose import MULTI_NODE_FLAGS, family, flag_value
from hybridplan.cookbook.text import interpolate
from hybridplan.engine.api import LaunchCommand
from hybridplan.errors import HybridPlanError

if TYPE_CHECKING:
    from hybridplan.hardware.platform import Platform
    from hybridplan.engine.api import Loaded

# the Deploy panel's labels for --speculative-algorithm values (cookbook-semantics §3.8)
SPEC_LABELS = {"EAGLE": "MTP", "EAGLE3": "MTP", "FROZEN_KV_MTP": "MTP", "NEXTN": "MTP", "DSPARK": "DSpark",
               "DFLASH": "DFlash", "NGRAM": "N-gram", "STANDALONE": "standalone draft"}
SPEC = "--speculative-algorithm"
MRR = "--max-running-requests"


def argv_of(flags: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Flag strings as the shell passes them (`--x v` -> `--x`, `v`; `--x=v` stays one token; a quoted JSON value,
    `--model-loader-extra-config '{"a": true}'`, is one token); unbalanced quotes split on whitespace."""
    out: list[str] = []
    for f in flags:
        out += _tokens(f)
    return tuple(out)


@lru_cache(maxsize=8192)
def _tokens(flag: str) -> tuple[str, ...]:
    """One flag string's shell tokens (a page repeats the same flag strings in every selection)."""
    try:
        return tuple(shlex.split(flag))
    except ValueError:
        return tuple(flag.split())


def env_pairs(env: list[str] | tuple[str, ...], values: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """`KEY=VALUE` entries (placeholders filled) as the (key, value) pairs a LaunchCommand carries."""
    return tuple((key, value) for key, _, value in (interpolate(e, values).partition("=") for e in env))


def launch_command(flags: list[str] | tuple[str, ...], env: list[str] | tuple[str, ...],
                   values: Mapping[str, str]) -> LaunchCommand:
    """The composed command with placeholders filled, as the engine would receive it."""
    return LaunchCommand(env=env_pairs(env, values), argv=argv_of([interpolate(f, values) for f in flags]))


def sized_command(flags: list[str] | tuple[str, ...], env: list[str] | tuple[str, ...],
                  values: Mapping[str, str]) -> LaunchCommand:
    """The command the engine model sizes: the multi-node trio is dropped (it does not change one rank's pools, and
    its values are placeholders for the user)."""
    return launch_command([f for f in flags if family(f) not in MULTI_NODE_FLAGS], env, values)


@lru_cache(maxsize=4096)
def resolve(command: LaunchCommand, version: str, platform: Platform | None = None) -> Loaded | HybridPlanError:
    """hybridplan.engine.sglang.serving.loading.load, memoised (pages render the same commands many times); errors are returned."""
    from hybridplan.engine.api import load

    try:
        return load(command, platform=platform, version=version)
    except HybridPlanError as exc:
        return exc


def spec_banners(flags: list[str], loaded: Loaded | HybridPlanError) -> tuple[list[str], list[str]]:
    """(warnings, notes) about --max-running-requests under speculative decoding, on the effective flags.

    Without the flag the engine resets it (arg_groups/speculative_hook.py::_default_mrr); the value is read from
    the engine model's resolution, not hard-coded.
    """
    algo = flag_value(flags, SPEC)
    if algo is None:
        return [], []
    label = SPEC_LABELS.get(algo.upper(), algo)
    if any(family(f) == MRR for f in flags):
        return [], [f"{label} is on and this recipe pins --max-running-requests to {flag_value(flags, MRR)}."]
    if isinstance(loaded, HybridPlanError):
        return [f"{label} is on without --max-running-requests: SGLang resets it for speculative decoding "
                "(the engine model could not resolve this command to say to what)."], []
    reset = loaded.args.arg("max_running_requests")
    return [f"{label} is on without --max-running-requests: SGLang resets --max-running-requests to "
            f"{reset.value} for speculative decoding ({reset.rule}); set it explicitly to override."], []
