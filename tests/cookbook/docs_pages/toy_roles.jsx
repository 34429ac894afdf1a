// A docs-shaped cookbook config module written for hybridplan's tests (not a docs page): a PD-role match dim whose
// strategy options are shown by role, so some (role, strategy) pairs have no cell.
export const config = {
  modelName: "Toy-Roles",
  supportedHardware: ["h200", "b200"],
  matchDims: [
    { id: "pdMode", title: "PD Mode", options: [
      { id: "unified", label: "Unified" },
      { id: "prefill", label: "Prefill", disabled: (s) => s.hw === "h200", disableReason: "No PD on H200." },
    ] },
    { id: "strategy", title: "Strategy", options: [
      { id: "balanced", label: "Balanced", showWhen: (s) => s.pdMode !== "prefill" },
      { id: "default", label: "Default", showWhen: (s) => s.pdMode === "prefill" },
    ] },
  ],
  overlayDims: [
    { id: "ssm", title: "SSM dtype", default: "none", options: [
      { id: "none", label: "Default" },
      { id: "bf16", label: "bfloat16", flags: ["--mamba-ssm-dtype bfloat16"] },
    ] },
  ],
  modelNames: { default: "Qwen/Qwen3.5-27B" },
  dockerImages: { h200: "lmsysorg/sglang:toy", b200: "lmsysorg/sglang:toy-b200" },
  placeholders: {
    HOST_IP: { target: "command", label: "Bind host", default: "0.0.0.0" },
    PORT: { target: "command", label: "Bind port", default: "30000" },
  },
  cells: [
    { match: { hw: "h200", pdMode: "unified", strategy: "balanced" }, verified: false,
      verificationStatus: "in-progress",
      env: [], flags: ["--model-path {{MODEL_NAME}}", "--tp-size 1", "--mem-fraction-static 0.85",
                       "--model-loader-extra-config '{\"enable_multithread_load\": true}'",
                       "--host {{HOST_IP}}", "--port {{PORT}}"] },
    { match: { hw: "b200", pdMode: "unified", strategy: "balanced" }, verified: false,
      verificationStatus: "in-progress",
      env: [], flags: ["--model-path {{MODEL_NAME}}", "--mem-fraction-static 0.85", "--host {{HOST_IP}}",
                       "--port {{PORT}}"] },
    { match: { hw: "b200", pdMode: "prefill", strategy: "default" }, verified: false,
      verificationStatus: "in-progress",
      env: [], flags: ["--model-path {{MODEL_NAME}}", "--mem-fraction-static 0.85", "--host {{HOST_IP}}",
                       "--port {{PORT}}"] },
  ],
};
