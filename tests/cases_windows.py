"""Sweep cases of the windowed and general reductions (functrans/primitives/windows.py):
``reduce_window`` (its sum, max and min primitives and the general fold),
``select_and_gather_add`` and ``select_and_scatter_add`` (the pooling derivatives),
``reduce``, ``map`` and ``associative_scan``.

Max and min pools are swept on distinct values (kind "spread"): at a tie the pool is not
differentiable and a numerical difference would cross it.  tests/test_windows.py checks
ties, against a hand-routed reference.
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans import lax
from functrans.primitives import windows
from sweep import A, Case


def _window(op, init, *params):
    return lambda x: lax.reduce_window(x, init, op, *params)


def _matmul2(a, b):
    """2x2 matrix products, each matrix given by its four entries (a tuple of arrays)."""
    (a00, a01, a10, a11), (b00, b01, b10, b11) = a, b
    return (a00 * b00 + a01 * b10, a00 * b01 + a01 * b11,
            a10 * b00 + a11 * b10, a10 * b01 + a11 * b11)


def _entries(m):
    return tuple(m[..., i, j] for i in range(2) for j in range(2))


def _product_of_matrices(m):
    return fnp.stack(lax.reduce(_entries(m), (1., 0., 0., 1.), _matmul2, (0,)), -1)


def _prefix_products(m):
    return fnp.stack(lax.associative_scan(_matmul2, _entries(m)), -1)


# map's functions are module-level: scan's body then finds its trace again on every call
# (an inline lambda closing over a traced value is traced anew, so gradient tapes would
# see a new structure each time)
def _scaled_sine(args):
    row, w = args
    return fnp.sin(row) * w


def _cubic_row(row):
    return fnp.sum(row * row) * row


def _argmax_pair(a, b):
    take_a = a[0] >= b[0]
    return lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1])


PRIMITIVE_CASES = [
    Case("reduce_window_sum_1d", _window(lax.add, 0., (3,), (2,), "SAME"), [A(7)]),
    Case("reduce_window_sum_2d_dilated",
         _window(lax.add, 0., (2, 2), (1, 2), ((1, 0), (2, 1)), (2, 1), (1, 2)), [A(3, 4)]),
    Case("reduce_window_sum_3d", _window(lax.add, 0., (2, 1, 2), (1, 1, 2), "VALID"),
         [A(3, 2, 4)]),
    Case("avg_pool_nhwc", lambda x: lax.reduce_window(x, 0., lax.add, (1, 2, 2, 1),
                                                      (1, 2, 2, 1), "VALID") / 4,
         [A(2, 4, 4, 1)]),
    Case("reduce_window_max_pool", _window(lax.max, -np.inf, (2, 2), (2, 2), "VALID"),
         [A(4, 6, kind="spread")]),
    Case("reduce_window_max_same", _window(lax.max, -np.inf, (3, 2), (1, 1), "SAME"),
         [A(3, 4, kind="spread")]),
    Case("reduce_window_max_window_dilation",
         _window(lax.max, -np.inf, (2,), (1,), ((1, 1),), None, (2,)), [A(6, kind="spread")]),
    Case("reduce_window_min_base_dilation",
         _window(lax.min, np.inf, (3, 2), (2, 1), ((1, 1), (0, 1)), (2, 1)),
         [A(3, 3, kind="spread")]),
    Case("reduce_window_max_3d", _window(lax.max, -np.inf, (1, 2, 2), (1, 1, 2), "SAME"),
         [A(2, 3, 4, kind="spread")]),
    Case("reduce_window_sum_negative_padding",
         _window(lax.add, 0., (2, 2), (1, 2), ((-1, 1), (2, -3)), (2, 1)), [A(3, 5)]),
    Case("reduce_window_max_negative_padding",
         _window(lax.max, -np.inf, (2, 2), (1, 1), ((-1, 0), (1, -2))),
         [A(4, 5, kind="spread")]),
    Case("reduce_window_prod_negative_padding",
         _window(lax.mul, 1., (2,), (1,), ((-2, -1),), (2,)), [A(5)]),
    Case("reduce_window_prod_general", _window(lax.mul, 1., (2, 2), (1, 1), "SAME"),
         [A(3, 3)]),
    Case("reduce_window_logaddexp_general",
         _window(lambda a, b: fnp.logaddexp(a, b), -np.inf, (3,), (2,), ((1, 1),)), [A(6)]),
    Case("reduce_window_traced_init",
         lambda x, i: lax.reduce_window(x, i, lax.add, (2,), (1,), ((1, 2),)), [A(5), A()]),
    Case("reduce_window_pytree_argmax",
         lambda x, y: lax.reduce_window((x, y), (-np.inf, 0.), _argmax_pair, (2, 2), (1, 1),
                                        "VALID")[1], [A(3, 4, kind="spread"), A(3, 4)]),
    Case("select_and_gather_add",
         lambda t, x: windows.select_and_gather_add(t, x, "max", (2, 3), (1, 2), "SAME",
                                                    (1, 2)),
         [A(3, 4), A(3, 4, kind="spread")]),
    Case("select_and_scatter_add",
         lambda c, x: windows.select_and_scatter_add(c, x, "min", (2, 2), (2, 1),
                                                     ((1, 0), (0, 1))),
         [A(2, 4), A(3, 4, kind="spread")]),
    Case("reduce_add", lambda x: lax.reduce(x, 0., lax.add, (0, 2)), [A(2, 3, 2)]),
    Case("reduce_general_product_of_matrices", _product_of_matrices, [A(5, 2, 2, 2)]),
    Case("reduce_pytree_argmax",
         lambda x, y: lax.reduce((x, y), (-np.inf, 0.), _argmax_pair, (1,))[1],
         [A(3, 5, kind="spread"), A(3, 5)]),
    Case("map", lambda x, w: lax.map(_scaled_sine, (x, w)), [A(4, 3), A(4)]),
    Case("map_batch_size", lambda x: lax.map(_cubic_row, x, batch_size=3), [A(7, 2)]),
    Case("associative_scan_add", lambda x: lax.associative_scan(lax.add, x, axis=1),
         [A(2, 7)]),
    Case("associative_scan_mul_reverse",
         lambda x: lax.associative_scan(lax.mul, x, reverse=True), [A(6, 2)]),
    Case("associative_scan_matrices", _prefix_products, [A(5, 2, 2)]),
]
