"""vLLM as a second engine: its `vllm serve` flags, argument resolution and hybrid KV cache planning (0.33.0).

Pure functions over frozen dataclasses; each rule cites the vLLM file::function it mirrors. Callers reach it through
`engine.for_version(version)`, never directly (an import-linter contract enforces it).
"""
