"""The Python API behind `hybridplan.explain`, `plan`, `compare`, `check_log` and `preflight` (hybridplan/__init__.py
lists what is public). The CLI and the web call the same functions (calls.py's `run_*`), so the three answer alike.
Modules here import the engine layers lazily: importing one costs no engine, model or card loading."""
