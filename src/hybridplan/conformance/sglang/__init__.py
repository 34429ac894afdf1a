"""SGLang's side of the conformance suite: the driver that runs in sglang's interpreter (driver.py) and its typed
boundary (schema.py), the checkpoint directories and scenarios it runs (fixtures.py, scenarios.py), hybridplan's
answers (model_side.py), the description the neutral runner and comparison read (oracle.py), and check-engine's
release match (match.py, check.py).

Kept free of imports: the oracle interpreter imports this package (launch.py) to reach driver.py and schema.py.
"""
