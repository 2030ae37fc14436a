"""Times compile + load + first launch of the matmul kernel in this (new) process and
prints {"s": seconds}: with an empty TRITON_CACHE_DIR that is a cold compile, with a
filled one a warm start."""
import json
import time

import torch

import cases


def main():
    a, b, c = (torch.randn(64, 64), torch.randn(64, 64), torch.empty(64, 64))
    start = time.perf_counter()
    cases.launch_matmul(a, b, c)
    first = time.perf_counter() - start
    start = time.perf_counter()
    cases.launch_matmul(a, b, c)
    steady = time.perf_counter() - start
    print(json.dumps({"s": first - steady}))


if __name__ == "__main__":
    main()
