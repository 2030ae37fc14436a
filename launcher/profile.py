"""Opt-in kernel timing: `TRITON_SPIRV_PROFILE=1` records the OpenCL event time of every
kernel launch and prints a table at exit (kernel, calls, total and median time, GB/s);
`TRITON_SPIRV_PROFILE_JSON=FILE` also writes it as JSON.

Bytes per launch are the sizes of the launch's buffer arguments (what the tensors
passed to the kernel span), so GB/s is the bandwidth of a kernel that reads or writes
each of its tensors once; it is left out where a launch passes no buffer.

With the variable unset nothing here runs: the device's queue is created without
CL_QUEUE_PROFILING_ENABLE and launchers keep the plain enqueue (OpenCLLauncher
installs `profiled_launch_calls` only when `profiling_enabled()`). Read the variable
before the first launch: the queue is made once per process.
"""

import atexit
import json
import os
import statistics
import sys
import threading

PROFILE_ENV = "TRITON_SPIRV_PROFILE"
PROFILE_JSON_ENV = "TRITON_SPIRV_PROFILE_JSON"


def profiling_enabled():
    return os.environ.get(PROFILE_ENV, "0") not in ("", "0")


class LaunchProfile:
    """Kernel times from OpenCL events, read once each event has completed."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pending = []   # (kernel, event, bytes)
        self.times = {}     # kernel -> [(nanoseconds, bytes or None)]

    def record(self, kernel, event, nbytes):
        with self.lock:
            self.pending.append((kernel, event, nbytes))
            if len(self.pending) > 1:
                self._read_completed()

    def _read_completed(self, wait=False):
        still = []
        for kernel, event, nbytes in self.pending:
            if wait:
                event.wait()
            elif event.command_execution_status != 0:  # CL_COMPLETE is 0
                still.append((kernel, event, nbytes))
                continue
            elapsed = event.profile.end - event.profile.start
            self.times.setdefault(kernel, []).append((elapsed, nbytes))
        self.pending = still

    def summary(self):
        """One row per kernel, most total time first."""
        with self.lock:
            self._read_completed(wait=True)
            rows = [_row(kernel, samples) for kernel, samples in self.times.items()]
        return sorted(rows, key=lambda row: -row["total_ms"])

    def table(self):
        rows = self.summary()
        header = f"{'kernel':32s} {'calls':>7s} {'total ms':>10s} {'median us':>10s} {'GB/s':>8s}"
        lines = ["triton-spirv kernel profile (OpenCL event times)", header]
        for row in rows:
            gbps = f"{row['gbps']:8.2f}" if row["gbps"] is not None else f"{'-':>8s}"
            lines.append(f"{row['kernel'][:32]:32s} {row['calls']:7d} {row['total_ms']:10.3f} "
                         f"{row['median_us']:10.1f} {gbps}")
        return "\n".join(lines)


def _row(kernel, samples):
    nanoseconds = [ns for ns, _ in samples]
    byte_counts = [b for _, b in samples if b]
    total_ns = sum(nanoseconds)
    timed_with_bytes = sum(ns for ns, b in samples if b)
    return {
        "kernel": kernel,
        "calls": len(samples),
        "total_ms": total_ns / 1e6,
        "median_us": statistics.median(nanoseconds) / 1e3,
        "bytes": sum(byte_counts) if byte_counts else None,
        # bytes per nanosecond are GB/s
        "gbps": sum(byte_counts) / timed_with_bytes if byte_counts and timed_with_bytes else None,
    }


_profile = None
_profile_lock = threading.Lock()


def launch_profile():
    """The process's profile, made (and its report at exit registered) on first use."""
    global _profile
    with _profile_lock:
        if _profile is None:
            _profile = LaunchProfile()
            atexit.register(report_at_exit)
        return _profile


def report_at_exit():
    if _profile is None or not _profile.times and not _profile.pending:
        return
    print(_profile.table(), file=sys.stderr)
    path = os.environ.get(PROFILE_JSON_ENV)
    if path:
        with open(path, "w") as f:
            json.dump({"kernels": _profile.summary()}, f, indent=2)


def profiled_launch_calls(kernel_name, enqueue, set_args):
    """(enqueue, set_args) for a launcher of `kernel_name` that record each launch:
    set_args notes the bytes of the buffer arguments, enqueue the event."""
    profile = launch_profile()
    last_bytes = [None]

    def noting_set_args(kernel, buffer_args, scalar_args):
        last_bytes[0] = sum(int(buffer.size) for buffer in buffer_args[1::2]) or None
        return set_args(kernel, buffer_args, scalar_args)

    def recording_enqueue(queue, kernel, global_size, local_size):
        event = enqueue(queue, kernel, global_size, local_size)
        profile.record(kernel_name, event, last_bytes[0])
        return event

    return recording_enqueue, noting_set_args
