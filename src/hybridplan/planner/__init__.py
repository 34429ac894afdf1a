"""The inverse of the engine model: memory timeline on a GPU, the balanced ratio and pin, and the plan search."""
