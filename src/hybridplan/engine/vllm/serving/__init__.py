"""vLLM's serving side: what explain, plan, logs check and compare ask of the engine (the launch on a card, the
available KV memory from the card alone, the plan search's candidates, a boot log held against the model). It reads
configs and checkpoints through models/ and weights/; the rules it applies are the pure modules of engine/vllm/."""
