"""Hero analysis: the emitter of a fusion is chosen from its fused computation (the
fusion's `kind=` is only a hint, and XLA:CPU's kinds do not follow XLA:GPU's).

The eight emitter types, tried in this order:
  sort                  root is a sort or a top-k (rank sort, emitters/sort.py)
  scatter               root is a scatter
  dynamic_update_slice  root is a dynamic-update-slice (in place: copy, then update)
  input_slices          root is a tuple of slices of same-shaped values
  concatenate           root is a concatenate
  reduction             reduce heroes reach every root through elementwise ops only,
                        and the reduced dimensions are contiguous
  transpose             a transpose hero that moves the minor dimension reaches the
                        root through elementwise ops only
  loop                  everything else
"""
from __future__ import annotations

from ..partitioner import output_roots
from .heroes import EmitterChoice, reaches_through_elementwise


def choose_emitter(computation) -> EmitterChoice:
    from .concatenate import try_concatenate
    from .dynamic_update_slice import try_dynamic_update_slice
    from .input_slices import try_input_slices
    from .loop import emit_loop
    from .reduction import try_reduction
    from .scatter import try_scatter
    from .sort import try_sort
    from .transpose import try_transpose
    for attempt in (try_sort, try_scatter, try_dynamic_update_slice, try_input_slices,
                    try_concatenate, try_reduction, try_transpose):
        choice = attempt(computation)
        if choice is not None:
            return choice
    return EmitterChoice("loop", [], [], emit_loop, "default")


__all__ = ["EmitterChoice", "choose_emitter", "output_roots", "reaches_through_elementwise"]
