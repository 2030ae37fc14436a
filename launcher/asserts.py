"""The assert record of kernels with `tl.device_assert` (metadata `asserts`).

Such a kernel takes one hidden `__global int*` parameter after its own: the assert
record, which the launcher zeroes before each launch. The first failing element writes
its assert id + 1 and its program id into it (the layout and the order of the hidden
parameters: opencl_abi). After the launch a non-zero id raises AssertionError naming
the kernel, the Python line and the message of the assert.
"""

import os

import numpy as np

from opencl_abi import ASSERT_ID, ASSERT_PROGRAM_ID, ASSERT_RECORD_INTS, AssertSite


class AssertPlan:
    """Worked out once per launcher from the metadata; `buffer` is made on first use."""

    def __init__(self, asserts, kernel_name):
        self.asserts = [AssertSite.from_entry(entry) for entry in asserts]
        self.kernel_name = kernel_name
        self.zeros = np.zeros(ASSERT_RECORD_INTS, np.int32)
        self.record = np.zeros(ASSERT_RECORD_INTS, np.int32)
        self.buffer = None
        self.context = None
        self.index = None

    def begin(self, function, queue, index, checks=None):
        """Pass the zeroed record as kernel parameter `index` (and record it when the
        launch is being recorded: bounds.LaunchChecks)."""
        import pyopencl as cl
        if self.context is not function.device.context:
            self.buffer = cl.Buffer(function.device.context, cl.mem_flags.READ_WRITE,
                                    size=self.zeros.nbytes)
            self.context = function.device.context
        function.kernel.set_arg(index, self.buffer)
        cl.enqueue_copy(queue, self.buffer, self.zeros, is_blocking=False)
        self.index = index
        if checks is not None and checks.recording is not None:
            checks.recording.raw_buffer(index, self.zeros.tobytes(), "int")

    def collect(self, queue, checks=None):
        """After the launch: the AssertionError to raise when an assert failed, else None."""
        import pyopencl as cl
        cl.enqueue_copy(queue, self.record, self.buffer, is_blocking=True)
        if checks is not None and checks.recording is not None:
            checks.recording.raw_output(self.index, self.record.tobytes())
        return self.error(self.record) if self.record[ASSERT_ID] != 0 else None

    def error(self, record):
        number = int(record[ASSERT_ID]) - 1
        site = self.asserts[number] if 0 <= number < len(self.asserts) \
            else AssertSite("", 0, "unknown assert")
        where = f"{os.path.basename(site.path)}:{site.line}" if site.path else "unknown location"
        pid = ", ".join(str(int(v)) for v in record[ASSERT_PROGRAM_ID:ASSERT_PROGRAM_ID + 3])
        return AssertionError(f"{self.kernel_name}: {where}: {site.message} (program id ({pid}))")


def assert_plan(metadata, kernel_name):
    """An AssertPlan for kernels with asserts, else None."""
    asserts = getattr(metadata, "asserts", None)
    if asserts is None and isinstance(metadata, dict):
        asserts = metadata.get("asserts")
    kernel_name = getattr(metadata, "source_name", None) or kernel_name
    return AssertPlan(asserts, kernel_name) if asserts else None
