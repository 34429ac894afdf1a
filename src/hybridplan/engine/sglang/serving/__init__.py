"""sglang's serving side: what explain, plan, logs check, ratio and the cookbook ask of the engine (the launch loaded
with its configs, the memory timeline on a card, the verdict by phase, the balanced ratio and pin, the plan search's
candidates, a boot log held against the model). It reads configs and checkpoints through models/ and weights/; the
rules it applies are the pure modules of engine/sglang/."""
