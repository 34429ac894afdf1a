"""hybridplan's release (semantic versioning: the public Python API is what `hybridplan.__all__` lists). Its own
module, so a layer that prints it does not import the package root (which names the API)."""

__version__ = "0.2.0"
