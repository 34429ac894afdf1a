"""Engine conformance: drive sglang's own code (in a separate interpreter) and compare it with hybridplan.

`oracle_driver.py` runs inside the engine's interpreter and is never imported here; the rest generates
scenarios, runs the driver, and compares field by field (`hybridplan check-engine`, tests/conformance).
"""
