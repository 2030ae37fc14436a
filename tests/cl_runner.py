"""Runs one OpenCL C kernel from a JSON description, for tests that run kernels under
Oclgrind without the launcher: `python3 tests/cl_runner.py spec.json out.npz`.

spec: {"source": path, "kernel": name, "global": [...], "local": [...],
       "args": [{"buffer": "x.npy"} | {"int": 3} | {"long": 3} | {"float": 1.5}, ...]}
Buffers are written back to out.npz as arg0, arg1, ... after the kernel ran.
"""
import json
import os
import sys

import numpy as np
import pyopencl as cl


def main(spec_path: str, out_path: str) -> None:
    with open(spec_path) as f:
        spec = json.load(f)
    folder = os.path.dirname(os.path.abspath(spec_path))
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context)
    with open(spec["source"]) as f:
        program = cl.Program(context, f.read()).build()
    kernel = getattr(program, spec["kernel"])
    args, buffers = [], {}
    for position, arg in enumerate(spec["args"]):
        if "buffer" in arg:
            host = np.load(os.path.join(folder, arg["buffer"]))
            buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                               hostbuf=host)
            buffers[position] = (host, buffer)
            args.append(buffer)
        else:
            (kind, value), = arg.items()
            args.append({"int": np.int32, "long": np.int64, "float": np.float32}[kind](value))
    kernel(queue, tuple(spec["global"]), tuple(spec["local"]), *args)
    for host, buffer in buffers.values():
        cl.enqueue_copy(queue, host, buffer)
    queue.finish()
    np.savez(out_path, **{f"arg{p}": host for p, (host, _buffer) in buffers.items()})


if __name__ == "__main__":
    main(*sys.argv[1:])
