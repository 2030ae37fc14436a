"""Times compile + load + first launch of the matmul kernel in this (new) process and
prints {"s": seconds, "stages": {stage: seconds}}: with an empty TRITON_CACHE_DIR that is
a cold compile (the stages are this compile's), with a filled one a warm start (the
stages are those recorded when the cached kernel was compiled)."""
import json
import time

import torch

import cases


def main():
    a, b, c = (torch.randn(64, 64), torch.randn(64, 64), torch.empty(64, 64))
    start = time.perf_counter()
    compiled = cases.launch_matmul(a, b, c)
    first = time.perf_counter() - start
    start = time.perf_counter()
    cases.launch_matmul(a, b, c)
    steady = time.perf_counter() - start
    stages = compiled.metadata._asdict().get("stage_seconds", {}) if compiled is not None else {}
    print(json.dumps({"s": first - steady, "stages": stages}))


if __name__ == "__main__":
    main()
