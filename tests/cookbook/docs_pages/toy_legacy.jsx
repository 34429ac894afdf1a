// A legacy-era (variants / quantizations / strategies / nodesOptions) module written for hybridplan's tests.
export const config = {
  modelName: "Toy-Legacy",
  supportedHardware: ["h200", "b200"],
  variants: [{ id: "instruct", label: "Instruct" }, { id: "thinking", label: "Thinking" }],
  quantizations: [{ id: "bf16", label: "BF16" }, { id: "fp8", label: "FP8" }],
  strategies: [{ id: "balanced", label: "Balanced" }],
  nodesOptions: [{ id: "single", label: "Single" }, { id: "multi-2", label: "2 nodes" }],
  modelNames: { "instruct|bf16": "toy/L-Instruct", "instruct|fp8": "toy/L-Instruct-FP8", "thinking|bf16": "toy/L-Thinking",
                "thinking|fp8": "toy/L-Thinking-FP8" },
  cells: [
    { match: { hw: "h200", variant: "instruct", quant: "bf16", strategy: "balanced", nodes: "single" }, verified: true,
      env: [], flags: ["--model-path {{MODEL_NAME}}", "--tp-size 8"] },
    { match: { hw: "h200", variant: "thinking", quant: "fp8", strategy: "balanced", nodes: "multi-2" }, verified: false,
      env: [], flags: ["--model-path {{MODEL_NAME}}", "--tp-size 16", "--reasoning-parser qwen3"] },
    { match: { hw: "b200", variant: "instruct", quant: "fp8", strategy: "balanced", nodes: "single" },
      verificationStatus: "in-progress", env: [], flags: ["--model-path {{MODEL_NAME}}", "--tp-size 4"] },
  ],
};
