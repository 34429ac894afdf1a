"""Model layer: a checkpoint's config.json -> ModelGeometry (layer pattern, state shapes, KV), per family."""
