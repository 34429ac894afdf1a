// A docs-shaped cookbook config module written for hybridplan's tests (not a docs page): the constructs a real
// module carries beside what hybridplan models — helpers and rule tables on the config (a method, a getter),
// Playground features, accuracy labels, the cookbook link, captions, a row-level strip, a cell key only the helpers
// read, template-literal commands, quoted and bare keys side by side, and a card in neither hardware list.

export const config = {
  modelName: "Toy-Helpers",

  supportedHardware: ["h200", "b200", "npux"],

  // ---- helpers read through `config` (the Deploy panel never calls them) ----
  cellFor(s) {
    return (config.cells || []).find((c) => c.match.hw === s.hw && c.match.strategy === s.strategy);
  },
  flagOf(cell, name) {
    return ((cell || {}).flags || []).find((f) => f.split(/[\s=]/)[0] === name);
  },
  sizeOf(cell, name) {
    const f = config.flagOf(cell, name);
    return f ? Number(f.split(/[\s=]/)[1]) || 1 : 1;
  },
  isPipelined(s) {
    return config.sizeOf(config.cellFor(s), "--pp-size") > 1;
  },
  get pipelinedRules() {
    return (config.cells || [])
      .filter((c) => config.sizeOf(c, "--pp-size") > 1 && !c.foldsPipeline)
      .map((c) => ({ when: { hw: [c.match.hw], strategy: [c.match.strategy] }, reason: "pipelined recipe" }));
  },

  matchDims: [
    {
      id: "strategy",
      title: "Strategy",
      options: [
        { id: "low-latency", label: "Low-Latency" },
        { id: "high-throughput", label: "High-Throughput" },
      ],
    },
  ],

  overlayDims: [
    {
      id: "spec",
      title: "Spec Decode",
      default: "none",
      // ignored by the docs' engine (only option-level strips apply)
      stripPrefixes: ["--speculative-algorithm"],
      options: [
        { id: "none", label: "Non-Spec" },
        {
          id: "mtp",
          label: "MTP",
          disabled: (s) => config.isPipelined(s),
          disableReason:
            "This recipe is pipelined " +
            "and MTP needs one pipeline stage.",
          flags: ["--speculative-algorithm EAGLE", "--speculative-num-steps 3"],
        },
      ],
    },
  ],

  modelNames: {
    default: "toy/Toy-Helpers",
    "npux|undefined": "toy/Toy-Helpers-W8A8",
  },

  dockerImages: {
    h200: "lmsysorg/sglang:dev",
    "b200": "lmsysorg/sglang:blackwell",
  },

  placeholders: {
    HOST_IP: { target: "command", label: "Bind host", default: "0.0.0.0" },
    PORT: { target: "command", label: "Bind port", default: "30000" },
    CURL_HOST: { target: "curl", label: "Server host", default: "localhost" },
    CURL_PORT: { target: "curl", label: "Server port", default: "30000" },
  },

  curl: `curl http://{{CURL_HOST}}:{{CURL_PORT}}/v1/chat/completions \\
  -H 'Content-Type: application/json' \\
  -d '{ "model": "{{MODEL_NAME}}", "messages": [{"role":"user","content":"Hi"}] }'`,

  accuracyLabels: [
    ["gsm8k_pct", "GSM8K", "%"],
  ],

  github: { cookbookModel: "toy/Toy-Helpers" },

  showPlaygroundLink: true,

  playgroundFeatures: {
    attention: {
      knobs: [
        { id: "tp", label: "TP", values: [null, 8, { value: 16, get disable() { return config.pipelinedRules; } }] },
      ],
    },
    flagSelects: [
      {
        id: "prefixCache", title: "Prefix Cache",
        stripPrefixes: ["--disable-radix-cache"],
        options: [
          { id: "on", label: "On" },
          { id: "off", label: "Off (S=1)", flags: ["--disable-radix-cache"] },
        ],
      },
      {
        id: "mambaRadix", title: "Radix Cache Strategy",
        showWhen: (b, v, d) => (((v && v.prefixCache) ?? (d && d.prefixCache)) !== "off"),
        options: [{ id: "auto", label: "Auto" }],
      },
    ],
  },

  cells: [
    {
      match: { hw: "h200", strategy: "low-latency" },
      verified: true,
      nnodes: 1,
      env: [],
      flags: ["--model-path {{MODEL_NAME}}", "--tp-size 8", "--mem-fraction-static 0.85", "--host {{HOST_IP}}",
              "--port {{PORT}}"],
    },
    {
      // two nodes, pipelined
      match: { hw: "h200", strategy: "high-throughput" },
      verified: false,
      nnodes: 2,
      foldsPipeline: false,
      env: ["NCCL_IB_DISABLE=0"],
      flags: ["--model-path {{MODEL_NAME}}", "--tp-size 8", "--pp-size 2", "--mem-fraction-static 0.85",
              "--host {{HOST_IP}}", "--port {{PORT}}"],
    },
    {
      match: { hw: "b200", strategy: "low-latency" },
      verified: true,
      nnodes: 1,
      env: [],
      flags: ["--model-path {{MODEL_NAME}}", "--tp-size 8", "--host {{HOST_IP}}", "--port {{PORT}}"],
    },
    {
      match: { hw: "npux", strategy: "low-latency" },
      verified: false,
      nnodes: 1,
      env: [],
      flags: ["--model-path {{MODEL_NAME}}", "--tp-size 16", "--host {{HOST_IP}}", "--port {{PORT}}"],
    },
  ],
};
