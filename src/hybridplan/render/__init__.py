"""Every text printer of the CLI, one module per output; commands import them only on the non-JSON path (rich is
slow to import)."""
