"""Sweep cases of functrans/primitives/checkpoint.py's ``name`` primitive (checkpoint_name:
the identity, tagged) and of the collectives (functrans/primitives/collectives.py), each
run inside a named vmap over the leading axis: values against a NumPy reference written
with explicit sums over that axis, derivatives in both modes to second order, and an outer
(unnamed) vmap against a loop, which sweeps the collectives' rules for another axis.  The
collectives never reach a jaxpr (the named vmap turns them into reductions), so
tests/test_primitives.py counts them as covered here and in tests/test_collectives.py."""
from __future__ import annotations

import numpy as np

import functrans as ft
import functrans.lax as lax
from functrans import checkpoint_name
from sweep import A, Case


def _named(f):
    return lambda x: ft.vmap(f, axis_name="i")(x)


def _gather_ref(x):
    return np.broadcast_to(x, (x.shape[0],) + x.shape) * x[:, None]


PRIMITIVE_CASES = [
    Case("checkpoint_name", lambda x: checkpoint_name(x, "h") * x, [A(2, 3)]),
    Case("psum_normalize", _named(lambda r: r / lax.psum(r * r, "i")), [A(3, 2)],
         reference=lambda x: x / np.sum(x * x, axis=0)),
    Case("pmean_center", _named(lambda r: (r - lax.pmean(r, "i")) * r), [A(4, 2)],
         reference=lambda x: (x - x.mean(axis=0)) * x),
    Case("pmax_shift", _named(lambda r: r * (r - lax.pmax(r, "i"))), [A(3, 2)],
         reference=lambda x: x * (x - x.max(axis=0))),
    Case("pmin_shift", _named(lambda r: r * lax.pmin(r, "i")), [A(3, 2)],
         reference=lambda x: x * x.min(axis=0)),
    Case("all_gather_outer", _named(lambda r: lax.all_gather(r, "i") * r), [A(3, 2)],
         reference=_gather_ref),
    Case("all_gather_tiled", _named(lambda r: lax.all_gather(r * r, "i", axis=0, tiled=True)),
         [A(3, 2)], reference=lambda x: np.broadcast_to((x * x).ravel(), (3, 6))),
    Case("axis_index_weights", _named(
        lambda r: r * lax.convert_element_type(lax.axis_index("i"), r.dtype)), [A(3, 2)],
         reference=lambda x: x * np.arange(3)[:, None], linear=True),
]
