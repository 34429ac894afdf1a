"""vLLM's side of the conformance suite: the driver that runs vLLM's own planning in the oracle interpreter
(driver.py) and its typed, checked boundary (schema.py), the scenario grid (scenarios.py), hybridplan's answers
(model_side.py) and the description the neutral runner and comparison read (oracle.py).

Kept free of imports: the oracle interpreter imports this package (launch.py) to reach driver.py and schema.py.
"""
