"""vLLM's side of the conformance suite, two oracles: its planning, the driver that runs vLLM's own planning in the
oracle interpreter (driver.py) and its typed, checked boundary (schema.py), the scenario grid (scenarios.py),
hybridplan's answers (model_side.py) and the description the neutral runner and comparison read (oracle.py); and its
parser, the driver that reads argv with the release's own `vllm serve` parser and records that parser flag by flag
(parse_driver.py, parse_schema.py), with its description and hybridplan's readings (parser.py).

Kept free of imports: the oracle interpreter imports this package (launch.py) to reach driver.py and schema.py.
"""
