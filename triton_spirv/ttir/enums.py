"""Triton's enum attributes: keyword -> integer value, as in TritonAttrEnums.td and
TritonAttrDefs.td (Triton 3.9). The reader stores every enum as an i32 IntegerAttr with
these values; see the module docstring of `reader` for which attribute uses which enum.
"""
from __future__ import annotations

from typing import Dict

CACHE_MODIFIER: Dict[str, int] = {
    "none": 1, "ca": 2, "cg": 3, "wb": 4, "cs": 5, "wt": 6, "cv": 7}
EVICTION_POLICY: Dict[str, int] = {"evict_normal": 1, "evict_first": 2, "evict_last": 3}
MEM_SEMANTIC: Dict[str, int] = {"relaxed": 1, "acquire": 2, "release": 3, "acq_rel": 4}
MEM_SYNC_SCOPE: Dict[str, int] = {"gpu": 1, "cta": 2, "sys": 3}
PADDING_OPTION: Dict[str, int] = {"zero": 1, "nan": 2}
ATOMIC_RMW_OP: Dict[str, int] = {
    "and": 1, "or": 2, "xor": 3, "add": 4, "fadd": 5, "max": 6, "min": 7, "umax": 8,
    "umin": 9, "exch": 10}
DESCRIPTOR_REDUCE_KIND: Dict[str, int] = {
    "add": 1, "min": 2, "max": 3, "inc": 4, "dec": 5, "and": 6, "or": 7, "xor": 8}
PROGRAM_DIM: Dict[str, int] = {"x": 0, "y": 1, "z": 2}
ROUNDING_MODE: Dict[str, int] = {"rtz": 0, "rtne": 1}
PROPAGATE_NAN: Dict[str, int] = {"none": 0, "all": 0xFFFF}
INPUT_PRECISION: Dict[str, int] = {"tf32": 0, "tf32x3": 1, "ieee": 2, "bf16x3": 3, "bf16x6": 4}
SCALE_DOT_ELEM_TYPE: Dict[str, int] = {
    "e4m3": 0, "e5m2": 1, "e2m3": 2, "e3m2": 3, "e2m1": 4, "bf16": 5, "fp16": 6}
