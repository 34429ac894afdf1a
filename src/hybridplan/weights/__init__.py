"""Checkpoint bytes: exact from safetensors headers or index metadata, the Hub when online, else an estimate."""
