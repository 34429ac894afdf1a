"""sglang 0.5.23: flag registry (flags.json), argument resolution, pool sizing and predicted boot-log lines."""

from hybridplan.engine.sglang_0_5_23.resolve import REGISTRY_PACKAGE, SIZING_FIELDS, VERSION, resolve
from hybridplan.engine.sglang_0_5_23.sizing import PoolBudget, PoolSizing, size_pools

__all__ = ["REGISTRY_PACKAGE", "SIZING_FIELDS", "VERSION", "PoolBudget", "PoolSizing", "resolve", "size_pools"]
