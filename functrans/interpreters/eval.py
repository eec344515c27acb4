"""Recording evaluation: the base interpreter (``core.EvalTrace``) that also remembers the
arrays it created, so ``vjp`` and ``linearize`` can tell their own intermediates from the
caller's arrays (which the caller may mutate after the call)."""
from __future__ import annotations

import weakref
from typing import Sequence

import numpy as np

from functrans.array_types import Array
from functrans.core import EvalTrace, Primitive


class RecordingEvalTrace(EvalTrace):
    """Evaluates like ``EvalTrace`` and remembers the NumPy arrays it created."""

    __slots__ = ("produced",)

    def __init__(self, level: int):
        super().__init__(level)
        self.produced: dict[int, weakref.ref] = {}  # id -> weak reference (ids get reused)

    def process_primitive(self, prim: Primitive, args: Sequence, params: dict):
        out = EvalTrace.process_primitive(self, prim, args, params)
        for x in out if prim.multiple_results else (out,):
            if type(x) is Array:  # the user's call: a view of the array it made
                x = x.base
            if type(x) is np.ndarray:
                for a in args:
                    if a is x:  # an impl may return its input (stop_gradient): not new
                        break
                else:
                    self.produced[id(x)] = weakref.ref(x)
        return out
