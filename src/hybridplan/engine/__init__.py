"""The engines hybridplan models, each a package (engine/sglang/, engine/vllm/) behind one API: `engine.api`
(`for_engine(name, version)`, the ServingEngine protocol, the neutral requests of `engine.requests`)."""
