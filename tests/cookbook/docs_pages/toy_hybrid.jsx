// A docs-shaped cookbook config module written for hybridplan's tests (not a docs page).
export const config = {
  modelName: "Toy-Hybrid-8B",
  supportedHardware: ["h200", "rtx5090", "b200"],
  hardware: [{ id: "rtx5090", label: "RTX 5090", vram: "32GB", vendor: "blackwell" }],
  cellFor(s) {
    return config.cells.find((c) => c.match.hw === s.hw && c.match.quant === s.quant);
  },
  matchDims: [
    { id: "quant", title: "Quantization", options: [
      { id: "bf16", label: "BF16" },
      { id: "nvfp4-dense-head", label: "NVFP4 dense head" },
      { id: "nvfp4-fp4-head", label: "NVFP4 FP4 head" },
    ] },
    { id: "nodes", title: "Nodes", options: [{ id: "single", label: "Single Node" }] },
  ],
  overlayDims: [
    {
      id: "spec", title: "Speculative Decoding", default: "none",
      options: [
        { id: "none", label: "None" },
        {
          id: "mtp", label: "MTP",
          disabled: (sel) => sel.hw === "rtx5090" && !String(sel.quant).startsWith("nvfp4"),
          disableReason: "The head only fits next to NVFP4 weights on 32GB",
          stripPrefixes: (sel) => (sel.hw === "rtx5090" ? ["--mem-fraction-static"] : []),
          flags: (sel) => [
            "--speculative-algorithm EAGLE",
            "--speculative-num-steps 3",
            ...(["rtx5090", "b200"].includes(sel.hw) ? ["--enable-linear-replayssm-spec"] : []),
            ...(sel.hw === "rtx5090"
              ? [sel.ssmDtype === "float32" ? "--mem-fraction-static 0.93" : "--mem-fraction-static 0.91"]
              : []),
          ],
        },
        {
          id: "draft", label: "Draft model",
          disabled: (sel) => sel.hw === "rtx5090" && sel.quant === "nvfp4-dense-head" && sel.ssmDtype === "float32",
          flags: ["--speculative-algorithm DFLASH", "--speculative-draft-model-path toy/draft"],
          env: (sel) => (config.cellFor(sel).flags.includes("--max-running-requests 1") ? ["TOY_SINGLE=1"] : []),
        },
      ],
    },
    {
      id: "ssmDtype", title: "SSM dtype", default: "float32",
      showWhen: (sel) => sel.hw !== "h200",
      options: [
        { id: "float32", label: "float32", flags: ["--mamba-ssm-dtype float32"] },
        { id: "bfloat16", label: "bfloat16", flags: ["--mamba-ssm-dtype bfloat16"],
          hints: (sel) => (sel.spec === "none" ? [] : ["bf16 state under speculation: watch the accept length"]) },
      ],
    },
  ],
  modelNames: {
    "h200|bf16": "toy/Toy-Hybrid-8B",
    "nvfp4-dense-head": "toy/Toy-Hybrid-8B-NVFP4-Dense",
    "rtx5090|nvfp4-fp4-head": "toy/Toy-Hybrid-8B-NVFP4-5090",
    default: "toy/Toy-Hybrid-8B-NVFP4",
  },
  dockerImages: { rtx5090: "lmsysorg/sglang:blackwell" },
  placeholders: {
    HOST_IP: { target: "command", label: "Bind host", default: "0.0.0.0" },
    PORT: { target: "command", label: "Bind port", default: "30000" },
  },
  cells: [
    { match: { hw: "h200", quant: "bf16", nodes: "single" }, verified: true,
      verificationStatus: (sel) => (sel.spec === "draft" ? "in-progress" : "verified"),
      env: [], flags: ["--model-path {{MODEL_NAME}}", "--mem-fraction-static 0.85", "--host {{HOST_IP}}", "--port {{PORT}}"] },
    { match: { hw: "rtx5090", quant: "nvfp4-dense-head", nodes: "single" }, verified: true,
      env: [], flags: ["--model-path {{MODEL_NAME}}", "--mem-fraction-static 0.9", "--max-running-requests 1",
                       "--host {{HOST_IP}}", "--port {{PORT}}"] },
    { match: { hw: "rtx5090", quant: "nvfp4-fp4-head", nodes: "single" }, verified: false,
      warn: "One request at a time on this card.",
      env: [], flags: ["--model-path {{MODEL_NAME}}", "--mem-fraction-static 0.9", "--max-running-requests 1",
                       "--host {{HOST_IP}}", "--port {{PORT}}"] },
    { match: { hw: "b200", quant: "nvfp4-fp4-head", nodes: "single" }, verified: true,
      verificationStatus: (sel) => (sel.ssmDtype === "bfloat16" && sel.spec !== "none" ? "unverified" : undefined),
      env: ["TOY_B200=1"], flags: ["--model-path {{MODEL_NAME}}", "--host {{HOST_IP}}", "--port {{PORT}}"] },
  ],
};
