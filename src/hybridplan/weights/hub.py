"""Checkpoint bytes from the Hugging Face Hub's safetensors metadata (needs huggingface_hub and the network)."""

from __future__ import annotations

from hybridplan.errors import BadInput
from hybridplan.provenance import Source
from hybridplan.weights.headers import span
from hybridplan.weights.inventory import Inventory, piece


def from_hub(repo_id: str) -> Inventory:
    """Every tensor's data span from the Hub's headers (huggingface_hub.get_safetensors_metadata); BadInput offline."""
    try:
        from huggingface_hub import get_safetensors_metadata
    except ImportError:
        raise BadInput("Hub lookup needs huggingface_hub: pip install 'hybridplan[hub]'") from None
    try:
        meta = get_safetensors_metadata(repo_id)
    except Exception as exc:  # network, auth, not-found: one line, the caller falls back to an estimate
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise BadInput(f"Hub metadata for {repo_id} unavailable ({type(exc).__name__}: {reason[:160]})") from None
    pieces = []
    for file_name, file_meta in meta.files_metadata.items():
        for name, info in file_meta.tensors.items():  # checked as a local header is (weights.headers.span)
            fields = {"dtype": info.dtype, "shape": info.shape, "data_offsets": list(info.data_offsets)}
            pieces.append(piece(name, span(f"{repo_id}/{file_name}", name, fields)))
    return Inventory(pieces=tuple(pieces), source=Source.HEADERS,
                     note=f"Hub safetensors metadata of {repo_id} ({len(meta.files_metadata)} file(s))")
