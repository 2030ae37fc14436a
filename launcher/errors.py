"""Exceptions raised by the OpenCL runtime.

Each one carries a message meant for the person who launched the kernel: it names
the kernel, the argument or the device involved and, where possible, what to do.
"""


class OpenCLRuntimeError(RuntimeError):
    """Base class of the runtime's own errors (device, build, launch)."""


class NoOpenCLDeviceError(OpenCLRuntimeError):
    """No OpenCL device could be found, or none of the candidates works."""


class OpenCLBuildError(OpenCLRuntimeError):
    """The OpenCL C compiler of the device rejected a program.

    `log` is the device's build log; `source_lines` maps line numbers that the log
    blames to the text of those lines in the OpenCL C source.
    """

    def __init__(self, message, log="", source_lines=None):
        super().__init__(message)
        self.log = log
        self.source_lines = dict(source_lines or {})


class KernelArgumentError(TypeError, ValueError):
    """A kernel argument does not fit its declared Triton type.

    It is both a TypeError (wrong kind of value) and a ValueError (value out of
    range) so that callers catching either of the usual exceptions see it.
    """


class GridError(ValueError):
    """The launch grid is malformed or exceeds what the device can run."""


class ClbinFormatError(ValueError):
    """The compiled artefact is not a clbin document this runtime understands."""
