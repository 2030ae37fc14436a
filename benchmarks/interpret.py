"""Runs one case under Triton's interpreter (TRITON_INTERPRET=1 set by the caller) and
prints {"ms": median milliseconds} as the last line."""
import json
import statistics
import sys
import time

import cases


def main():
    case, size = sys.argv[1], int(sys.argv[2])
    inputs = cases.make_inputs(case, size)
    launch = cases.LAUNCH[case]
    launch(*inputs)  # warm-up
    times = []
    for _ in range(3):
        start = time.perf_counter()
        launch(*inputs)
        times.append(time.perf_counter() - start)
    print(json.dumps({"ms": statistics.median(times) * 1e3}))


if __name__ == "__main__":
    main()
