"""Times tinygrad's default kernels for one case on its OpenCL backend (DEV=CL set by the
caller) and prints {"ms": median milliseconds}."""
import json
import statistics
import sys
import time

import numpy as np


def main():
    from tinygrad import Tensor
    case, size = sys.argv[1], int(sys.argv[2])
    if case == "vector_add":
        x, y = Tensor(np.random.rand(size).astype(np.float32)), Tensor(np.random.rand(size).astype(np.float32))
        step = lambda: (x + y).realize()  # noqa: E731
    elif case == "softmax":
        x = Tensor(np.random.rand(size, 4096).astype(np.float32))
        step = lambda: x.softmax(axis=1).realize()  # noqa: E731
    elif case == "matmul":
        a = Tensor(np.random.rand(size, size).astype(np.float32))
        b = Tensor(np.random.rand(size, size).astype(np.float32))
        step = lambda: (a @ b).realize()  # noqa: E731
    else:
        raise SystemExit(f"no tinygrad version of {case}")
    for _ in range(3):
        step()
    from tinygrad import Device
    times = []
    for _ in range(10):
        start = time.perf_counter()
        step()
        Device[Device.DEFAULT].synchronize()
        times.append(time.perf_counter() - start)
    print(json.dumps({"ms": statistics.median(times) * 1e3}))


if __name__ == "__main__":
    main()
