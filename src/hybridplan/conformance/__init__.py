"""Engine conformance: drive each engine's own code (in a separate interpreter) and compare it with hybridplan.

Each engine's side is its package (sglang/, vllm/): the driver that runs in the engine's interpreter and its typed
boundary (driver.py, schema.py), its scenarios, hybridplan's answers, and its description (oracle.py; vLLM's parser is
a second oracle, vllm/parser.py). What every engine shares is here: oracle.py (what a description holds), runner.py
(start a driver through launch.py, read its answers through the oracle's schema), compare.py (field by field, each
drift naming the hybridplan rule; tallies), recorded.py (the recorded answers the tests compare with), and the
driver-side stubs.py, wire.py (the boundary check) and flag_record.py (an argparse action as the flag registries hold
it), which run in the oracle interpreter too.
"""
