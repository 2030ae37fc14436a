"""Deterministic kernel inputs from a small description (numpy only).

A recording of a GPU-sized launch holds hundreds of MiB of inputs; the kit carries a
description instead (`spec`) and regenerates the bytes on the replay machine. The
values come from splitmix64 on the element index in uint64 arithmetic, which numpy
computes identically everywhere (unlike `numpy.random`, whose streams may change
between versions); the recorded SHA-256 of every input is checked after
regeneration all the same.

    {"kind": "uniform", "dtype": "float32", "shape": [4096, 1024], "seed": 3, "low": -1, "high": 1}
    {"kind": "integers", "dtype": "int32", "shape": [1048576], "seed": 5, "high": 1024}
    {"kind": "zeros", "dtype": "int32", "shape": [1024]}
"""
import hashlib

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _splitmix64(count, seed):
    """`count` pseudo-random uint64 words for `seed`."""
    with np.errstate(over="ignore"):
        z = (np.arange(count, dtype=np.uint64) + np.uint64(seed) * np.uint64(count + 1)) * _GOLDEN
        z ^= z >> np.uint64(30)
        z *= _MIX1
        z ^= z >> np.uint64(27)
        z *= _MIX2
        z ^= z >> np.uint64(31)
    return z


def generate(spec):
    """The array `spec` describes (C order)."""
    shape = tuple(int(n) for n in spec["shape"])
    dtype = np.dtype(spec["dtype"])
    count = int(np.prod(shape, dtype=np.int64))
    kind = spec["kind"]
    if kind == "zeros":
        return np.zeros(shape, dtype)
    words = _splitmix64(count, int(spec["seed"]))
    if kind == "uniform":
        unit = (words >> np.uint64(40)).astype(np.float64) * 2.0 ** -24     # [0, 1), 24 bits
        low, high = float(spec.get("low", 0.0)), float(spec.get("high", 1.0))
        return (low + (high - low) * unit).astype(dtype).reshape(shape)
    if kind == "integers":
        return (words % np.uint64(int(spec["high"]))).astype(dtype).reshape(shape)
    raise ValueError(f"unknown input kind {kind!r} in {spec}")


def digest(data) -> str:
    """SHA-256 of an array's or a byte string's bytes."""
    return hashlib.sha256(data.tobytes() if isinstance(data, np.ndarray) else bytes(data)).hexdigest()
