"""A stand-in for `torch.cuda`, for Triton code that reaches the device through
`driver.active.get_device_interface()` (triton.testing.do_bench and friends).

Launches are synchronous and all work goes to the device's one in-order queue, so
events are host timestamps taken after draining that queue, and every stream is
that queue.
"""

import contextlib
import time
from types import SimpleNamespace

from .device import get_device


def is_available():
    try:
        get_device()
    except Exception:
        return False
    return True


def device_count():
    return 1 if is_available() else 0


def current_device():
    return 0


def set_device(device):
    if _index(device) != 0:
        raise ValueError(f"OpenCL device index {device} does not exist: the backend runs on one device, index 0")


class device:
    """`with torch.cuda.device(i):` as libraries write it; only index 0 exists."""

    def __init__(self, device):
        set_device(device)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def synchronize(device=None):
    get_device().synchronize()


def get_device_name(device=None):
    return get_device().name


def get_device_capability(device=None):
    # No compute capability in OpenCL; (0, 0) keeps comparisons such as `>= (8, 0)` false.
    return (0, 0)


def get_device_properties(device=None):
    props = get_device().properties()
    return SimpleNamespace(
        name=props["name"],
        total_memory=props["global_mem_size"],
        multi_processor_count=props["multiprocessor_count"],
        max_shared_memory=props["max_shared_mem"],
        warp_size=props["warpSize"],
        major=0,
        minor=0,
    )


def empty_cache():
    """Nothing to free: tensors live in host memory owned by torch."""


def _index(device):
    if device is None:
        return 0
    if isinstance(device, int):
        return device
    index = getattr(device, "index", None)
    return 0 if index is None else index


class Event:
    """Host timestamp taken when the queue has drained (cf. torch.cuda.Event)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self._time = None

    def record(self, stream=None):
        synchronize()
        self._time = time.perf_counter()

    def elapsed_time(self, end_event):
        """Milliseconds from this event to `end_event`."""
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0

    def query(self):
        return True

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


class Stream:
    """The device's in-order queue (there is only one)."""

    def __init__(self, device=None, priority=0, **kwargs):
        self.device = device

    @property
    def queue(self):
        return get_device().queue

    def synchronize(self):
        synchronize()

    def query(self):
        return True

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event


ExternalStream = Stream

_DEFAULT_STREAM = Stream()


def current_stream(device=None):
    return _DEFAULT_STREAM


def default_stream(device=None):
    return _DEFAULT_STREAM


@contextlib.contextmanager
def stream(s=None):
    """Work in the block goes to the one queue whatever `s` is."""
    yield s
