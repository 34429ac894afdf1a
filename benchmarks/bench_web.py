"""Server-side time per request of `hybridplan serve`: the page and each API endpoint, in-process.

Run: python benchmarks/bench_web.py [--runs 50]. For each request prints the median and p95 of the app's own
`Server-Timing` (handler + rendering, no network), and the round trip through the in-process client. Repeated
requests hit the layers' own memo caches (as a user clicking back and forth does); the first call is warm-up.
"""

from __future__ import annotations

import argparse
import statistics
import time

Q27 = "python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B --mem-fraction-static 0.85"
DSPARK = Q27 + " --speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark"
REQUESTS = [
    ("GET /", "GET", "/", None),
    ("GET /api/pages/qwen3.8-27b", "GET", "/api/pages/qwen3.8-27b", None),
    ("POST /api/render (default selection)", "POST", "/api/render", {"page": "qwen3.8-27b"}),
    ("POST /api/render (5090 DFLASH2, L/C)", "POST", "/api/render",
     {"page": "qwen3.8-27b", "picks": {"hw": "rtx5090", "quant": "nvfp4-fp4-head", "spec": "dflash"},
      "request_length": 9216, "concurrency": 1}),
    ("POST /api/render (a new L each time)", "POST", "/api/render",
     lambda i: {"page": "qwen3.8-27b", "picks": {"hw": "h200", "spec": "eagle"}, "request_length": 4000 + i,
                "concurrency": 8}),
    ("POST /api/ratio (on a GPU)", "POST", "/api/ratio",
     {"command": DSPARK, "request_length": 9216, "concurrency": 4, "gpu": "h200"}),
    ("POST /api/explain (no budget)", "POST", "/api/explain", {"command": Q27}),
    ("POST /api/explain (budget, DSPARK)", "POST", "/api/explain", {"command": DSPARK, "pool_budget_gib": 66.5}),
    ("POST /api/explain (GPU: memory picture)", "POST", "/api/explain", {"command": DSPARK, "gpu": "h200"}),
    ("POST /api/plan", "POST", "/api/plan", {"model": "Qwen/Qwen3.8-27B", "quant": "nvfp4", "gpu": "rtx5090",
                                             "request_length": 9216, "concurrency": 1, "spec": "dflash"}),
]


def _server_ms(res) -> float:
    return float(res.headers["server-timing"].split("dur=", 1)[1])


def measure(client, method: str, path: str, body, runs: int, start: int = 0) -> tuple[list[float], list[float]]:
    server, total = [], []
    for i in range(start, start + runs):
        t0 = time.perf_counter()
        res = client.request(method, path, json=body(i) if callable(body) else body)
        total.append((time.perf_counter() - t0) * 1000)
        if res.status_code >= 500:
            raise SystemExit(f"{method} {path}: {res.status_code} {res.text}")
        server.append(_server_ms(res))
    return server, total


def _p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(len(xs) * 0.95) - 1)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=50)
    ns = ap.parse_args()
    from fastapi.testclient import TestClient

    from hybridplan.web.app import create_app

    with TestClient(create_app(), base_url="http://127.0.0.1:8000") as client:  # the default bound address
        for name, method, path, body in REQUESTS:
            measure(client, method, path, body, 2, start=-2)  # warm caches (catalog, registry)
            server, total = measure(client, method, path, body, ns.runs)
            print(f"{name:<44} server median {statistics.median(server):7.2f} ms  p95 {_p95(server):7.2f} ms"
                  f"  | round trip median {statistics.median(total):7.2f} ms")


if __name__ == "__main__":
    main()
