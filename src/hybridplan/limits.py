"""Upper bounds on every size a user controls, checked at the edge before any work (each with its reason).

Nothing downstream builds a per-stage, per-layer, per-request or per-token structure from a user's number without
one of these bounds having been checked first.
"""

from __future__ import annotations

MAX_PARALLEL = 1024  # tp / pp / dp / ep / cp sizes and nnodes: GPUs in one deployment (a 72-GPU rack x 14)
MAX_LAYERS = 4096  # decoder layers in a config: 30x the deepest released model (~128)
MAX_HEADS = 65536  # attention or state heads per layer: 500x the widest released model
MAX_DIM = 1 << 20  # hidden / head / state / intermediate sizes: 30x the widest FFN released
MAX_CONV_KERNEL = 1024  # a causal-conv window (released models use 2 to 4)
MAX_CONTEXT = 1 << 24  # tokens in one context, chunk or prefill batch: 16.7M, above the longest any config declares
MAX_POOL_TOKENS = (1 << 31) - 1  # KV pool tokens: the engine's req_to_token table holds slot indices as int32
MAX_REQUESTS = 1 << 20  # running requests, state slots, concurrency: 1M, far above any pool a card can hold
MAX_LIST = 1024  # entries in a user-given list (CUDA-graph batch sizes): the engine captures a graph per entry
MAX_SPEC_TOKENS = 1024  # speculative steps, top-k, draft tokens and blocks: one verify batch per request
MAX_RATIO = 1e6  # a memory ratio (state : KV, SWA : full): a million to one already leaves one pool empty
MAX_GPU_GIB = 16384.0  # memory of one GPU, in GiB: 50x the largest card (288 GB)
MAX_UTIL_PROPOSED = 0.95  # plan --engine vllm proposes no gpu_memory_utilization above this unless --max-util says
MAX_INT = (1 << 63) - 1  # any integer flag: the engine hands ints to torch and C++ as int64
MAX_COMMAND_CHARS = 2 << 20  # a pasted launch command: Linux's ARG_MAX, no shell could run a longer one
MAX_ARGS = 4096  # words in one pasted launch, repeated flags included: published launches have under 100 (a
#                 full --cudagraph-capture-sizes list ~1,000); each plan candidate re-reads them
MAX_PATH_CHARS = 4096  # a --model-path value: Linux's PATH_MAX
MAX_CONFIG_BYTES = 16 << 20  # config.json / hf_quant_config.json: 16x the largest published (~1 MB of layer lists)
MAX_JSON_DEPTH = 64  # nesting of a config.json or weights metadata: real files nest 3 or 4 levels
MAX_SAFETENSORS_HEADER = 100_000_000  # a .safetensors JSON header: the format's own cap (safetensors tensor.rs
#                                      MAX_HEADER_SIZE)
MAX_INDEX_BYTES = 64 << 20  # a model.safetensors.index.json: ~1M tensor names; the largest published (Kimi K2) ~140k
MAX_WEIGHT_FILES = 4096  # .safetensors shards in one directory: 25x the most published (DeepSeek-V3's 163)
MAX_YAML_BYTES = 4 << 20  # a cookbook page: 250x the largest bundled page (16 KB)
MAX_YAML_DEPTH = 64  # nesting of a cookbook page: real pages nest under 15 levels
MAX_YAML_ALIASES = 128  # aliases (`*name`, `<<: *name`) in a page: bundled pages use 10
MAX_YAML_NODES = 1 << 18  # nodes of a page once aliases are expanded (billion laughs): bundled pages have < 5,000
MAX_PAGE_COMBOS = 1 << 16  # selections (hardware x dimension options) or concrete cells of a page: the validator
#                            visits each one; bundled pages have at most 320

MAX_LOG_BYTES = 8 << 20  # `logs parse|check` refuse a larger file before reading it
WEB_MAX_LOG_CHARS = 2_000_000  # the web API's bound on a pasted log
