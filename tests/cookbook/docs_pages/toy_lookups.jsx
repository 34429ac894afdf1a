// A docs-shaped cookbook config module written for hybridplan's tests (not a docs page): no variant or strategy dim,
// lookup tables keyed at the coarsest rung (one image per card with a per-quant exception, one default model name
// with per-quant exceptions), a page-declared card with the picker's `vram` caption, and a cell key only the
// module's own helpers read.
export const config = {
  modelName: "Toy-Lookups",
  supportedHardware: ["h200", "b200", "toycard"],
  hardware: [{ id: "toycard", label: "Toy Card", vram: "48GB", vendor: "nvidia" }],
  matchDims: [
    { id: "quant", title: "Quantization", options: [
      { id: "bf16", label: "BF16" }, { id: "fp8", label: "FP8" }, { id: "nvfp4", label: "NVFP4" },
    ] },
  ],
  overlayDims: [],
  modelNames: { default: "toy/L", fp8: "toy/L-FP8", nvfp4: "toy/L-NVFP4" },
  dockerImages: { h200: "toy/img:hopper", b200: "toy/img:blackwell", "b200|nvfp4": "toy/img:fp4",
                  toycard: "toy/img:card" },
  cells: [
    { match: { hw: "h200", quant: "bf16" }, verified: true, env: [],
      flags: ["--model-path {{MODEL_NAME}}", "--tp-size 1"] },
    { match: { hw: "b200", quant: "bf16" }, verified: true, env: [],
      flags: ["--model-path {{MODEL_NAME}}", "--tp-size 1"] },
    { match: { hw: "b200", quant: "fp8" }, verified: true, env: [],
      flags: ["--model-path {{MODEL_NAME}}", "--tp-size 1"] },
    { match: { hw: "b200", quant: "nvfp4" }, verified: true, pipelineFolds: true, env: [],
      flags: ["--model-path {{MODEL_NAME}}", "--tp-size 1"] },
    { match: { hw: "toycard", quant: "bf16" }, verified: false, env: [],
      flags: ["--model-path {{MODEL_NAME}}", "--tp-size 1"] },
  ],
};
