"""hybridplan: an engine-faithful model of how SGLang lays out GPU memory for hybrid (state + KV) models."""

__version__ = "0.1.0"
