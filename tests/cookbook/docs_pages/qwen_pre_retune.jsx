// A docs-shaped cookbook config module written for hybridplan's tests (not a docs page): the RTX 5090 part of a
// Qwen3.8-27B page as it stood before the DFLASH2 pins were re-measured on build 1cf2b8c. DFLASH2 pins the
// fraction the page's measured notes show failing: fp32 at 0.945 with ratio 10 (capture OOM at 0.945 and 0.92),
// bf16 on the cell's 0.9 (first-request OOM), and fp32 Low-Latency is not greyed out yet.
export const config = {
  modelName: "Qwen3.8-27B pre-retune",
  supportedHardware: ["rtx5090"],
  hardware: [{ id: "rtx5090", label: "RTX 5090", vram: "32GB", vendor: "blackwell" }],
  matchDims: [
    { id: "quant", title: "Quantization", options: [{ id: "nvfp4-fp4-head", label: "NVFP4-FP4-Head" }] },
  ],
  overlayDims: [
    {
      id: "spec", title: "Speculative Decoding", default: "none",
      options: [
        { id: "none", label: "None" },
        {
          id: "eagle", label: "EAGLE",
          stripPrefixes: ["--mem-fraction-static"],
          flags: (sel) => [
            "--speculative-algorithm EAGLE", "--speculative-num-steps 3", "--speculative-eagle-topk 1",
            "--speculative-num-draft-tokens 4", "--enable-linear-replayssm-spec",
            sel.ssmDtype === "float32" ? "--mem-fraction-static 0.94" : "--mem-fraction-static 0.93",
          ],
        },
        {
          id: "dflash", label: "DFLASH2",
          stripPrefixes: (sel) => (sel.ssmDtype === "float32"
            ? ["--mem-fraction-static", "--mamba-full-memory-ratio"] : []),
          flags: (sel) => [
            "--speculative-algorithm DFLASH", "--speculative-draft-model-path incoai/Qwen3.8-27B-DFlash2",
            "--speculative-num-draft-tokens 8",
            ...(sel.ssmDtype === "float32" ? ["--mem-fraction-static 0.945", "--mamba-full-memory-ratio 10"] : []),
          ],
        },
      ],
    },
    {
      id: "tier", title: "Serving Strategy", default: "low-latency",
      options: [
        { id: "low-latency", label: "Low Latency", flags: ["--mamba-radix-cache-strategy extra_buffer"] },
        { id: "high-throughput", label: "High Throughput", flags: ["--mamba-radix-cache-strategy extra_buffer_lazy"] },
      ],
    },
    {
      id: "ssmDtype", title: "Mamba SSM Dtype", default: "float32",
      options: [
        { id: "float32", label: "float32", flags: ["--mamba-ssm-dtype float32"] },
        { id: "bfloat16", label: "bfloat16", flags: ["--mamba-ssm-dtype bfloat16"] },
      ],
    },
  ],
  modelNames: { "nvfp4-fp4-head": "RadixArk/Qwen3.8-27B-NVFP4" },
  placeholders: {
    HOST_IP: { target: "command", label: "Host IP", default: "0.0.0.0" },
    PORT: { target: "command", label: "Port", default: "30000" },
  },
  // what the docs format has no place for (the page's calculator workload); the docs ignore this key
  hybridplan: { workload: { request_length: 5120, concurrency: 64 } },
  cells: [
    { match: { hw: "rtx5090", quant: "nvfp4-fp4-head" }, verified: true, nnodes: 1, env: [],
      hybridplan: { verification: { build: "a build before 1cf2b8c (test page)", measurements: [
        { protocol: "bench_serving, random, one request at a time", workload: { isl: 8192, osl: 1024, concurrency: 1 } },
      ] } },
      flags: ["--trust-remote-code", "--model-path {{MODEL_NAME}}", "--kv-cache-dtype fp8_e4m3",
              "--mem-fraction-static 0.9", "--attention-backend flashinfer", "--max-running-requests 1",
              "--cuda-graph-max-bs-decode 1", "--reasoning-parser qwen3", "--tool-call-parser qwen3_coder",
              "--host {{HOST_IP}}", "--port {{PORT}}"] },
  ],
};
