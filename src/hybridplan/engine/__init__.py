"""Engine layer: per-version flag registries, argument resolution and pool sizing (pure functions)."""
