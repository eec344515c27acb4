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
    Case("ppermute_ring", _named(lambda r: lax.ppermute(r, "i", [(0, 1), (1, 2), (2, 0)]) * r),
         [A(3, 2)], reference=lambda x: np.roll(x, 1, axis=0) * x),
    Case("ppermute_partial", _named(lambda r: lax.ppermute(r * r, "i", [(0, 2), (2, 1)])),
         [A(3, 2)], reference=lambda x: np.stack([0 * x[0], x[2] ** 2, x[0] ** 2])),
    Case("pshuffle_square", _named(lambda r: lax.pshuffle(r, "i", [1, 2, 0]) ** 2), [A(3, 2)],
         reference=lambda x: np.roll(x, -1, axis=0) ** 2),
    Case("pbroadcast_scale", _named(lambda r: lax.pbroadcast(r, "i", 1) * r), [A(3, 2)],
         reference=lambda x: x[1] * x),
    # member b gets row b of every member's operand, stacked along the operand's last axis
    Case("all_to_all_stack", _named(lambda r: lax.all_to_all(r * r, "i", 0, 1)), [A(3, 3, 2)],
         reference=lambda x: np.transpose(x * x, (1, 2, 0))),
    Case("all_to_all_tiled", _named(lambda r: lax.all_to_all(r ** 3, "i", 0, 1, tiled=True)),
         [A(2, 4, 3)], reference=lambda x: (x ** 3).reshape(2, 2, 2, 3).transpose(
             1, 2, 0, 3).reshape(2, 2, 6)),
    Case("all_to_all_two_names", lambda x: ft.vmap(ft.vmap(
        lambda r: lax.all_to_all(r * r, ("i", "j"), 0, 1), axis_name="j"), axis_name="i")(x),
         [A(2, 3, 6, 2)], reference=lambda x: np.transpose(
             (x * x).reshape(6, 6, 2), (1, 2, 0)).reshape(2, 3, 2, 6)),
    Case("pswapaxes_square", _named(lambda r: lax.pswapaxes(r, "i", 1) ** 2), [A(3, 2, 3)],
         reference=lambda x: np.transpose(x, (2, 1, 0)) ** 2),
    Case("psum_scatter_rows", _named(lambda r: lax.psum_scatter(r * r, "i")), [A(3, 3, 2)],
         reference=lambda x: (x * x).sum(0)),
    Case("psum_scatter_tiled", _named(
        lambda r: lax.psum_scatter(r, "i", scatter_dimension=1, tiled=True) * r[:, :2]),
         [A(2, 3, 4)], reference=lambda x: np.moveaxis(
             x.sum(0).reshape(3, 2, 2), 1, 0) * x[:, :, :2]),
]
