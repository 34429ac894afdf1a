"""GPUs the planner knows: memory as the engine detects it, compute capability, what the card can run."""
