#!/usr/bin/env bash
# One card's memory as the driver and torch report it (total, torch-visible total, CUDA context before any weights,
# after cuBLAS): the figures data/gpus.yaml and planner_constants.yaml otherwise estimate. Run on a lent GPU machine;
# writes one JSON object to ${OUT:-.}/card_probe.json.
set -euo pipefail
out="${OUT:-.}/card_probe.json"
nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv,noheader
python3 - "$out" <<'PY'
import json, sys, time
import torch

MiB = 2**20
p = torch.cuda.get_device_properties(0)
free0, total = torch.cuda.mem_get_info()          # first CUDA call: the context is created here
x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
(x @ x).sum().item()                              # cuBLAS handle + workspace
torch.cuda.synchronize()
free1, _ = torch.cuda.mem_get_info()
alloc = torch.cuda.memory_reserved()
rec = {
    "device": p.name, "sm": p.major * 10 + p.minor, "multiprocessors": p.multi_processor_count,
    "torch": torch.__version__, "cuda_runtime": torch.version.cuda,
    "torch_total_mib": p.total_memory / MiB, "mem_get_info_total_mib": total / MiB,
    "context_mib": (total - free0) / MiB,
    "after_cublas_non_torch_mib": (total - free1 - alloc) / MiB,
    "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
}
json.dump(rec, open(sys.argv[1], "w"), indent=1)
print(json.dumps(rec))
PY
