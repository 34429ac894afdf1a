"""sglang 0.5.23: flag registry (flags.json), argument resolution, pool sizing and predicted boot-log lines.

Outside hybridplan.engine, reach it only through `hybridplan.engine.for_version("0.5.23")` (engine.api.Engine).
"""
