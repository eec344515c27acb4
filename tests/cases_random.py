"""Sweep cases of the random-number primitives (``functrans/primitives/prng.py``), through
``functrans.random``: keys made from integer seeds (bits are integers: no derivative in
them), with float parameters where the draw is smooth in them (derivatives checked).  The
sweep's vmap-against-a-loop check batches the seeds and the parameters; on the CuPy
stand-in the seeds, hence the keys, live on the device with the parameters."""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
import functrans.random as random
from functrans.scipy.stats import gaussian_kde
from sweep import A, Case

def _key(seed):
    return random.PRNGKey(seed)


PRIMITIVE_CASES = [
    Case("random_seed_split", lambda s: random.split(_key(s), 3), [A(kind="int")],
         differentiable=False),
    Case("random_fold_in", lambda s, d: random.fold_in(_key(s), d), [A(kind="int")] * 2,
         differentiable=False),
    Case("random_bits", lambda s: random.bits(_key(s), (2, 3), np.uint64), [A(kind="int")],
         differentiable=False),
    Case("random_randint", lambda s: random.randint(_key(s), (3,), -2, s + 10),
         [A(kind="int")], differentiable=False),
    Case("random_shuffle", lambda s: random.permutation(_key(s), 5), [A(kind="int")],
         differentiable=False),
    Case("random_uniform", lambda s, lo, d: random.uniform(_key(s), (2, 3), lo.dtype, minval=lo,
                                                           maxval=lo + 1 + d * d),
         [A(kind="int"), A(3), A(3)]),
    Case("random_normal", lambda s, c: c * random.normal(_key(s), (2, 3), c.dtype),
         [A(kind="int"), A(3)]),
    # The draw moves with the bounds but has no derivative in them (documented).
    Case("random_truncated_normal",
         lambda s, lo: random.truncated_normal(_key(s), lo - 1.0, lo + 1.0, (2, 3),
                                                   lo.dtype),
         [A(kind="int"), A(3)], differentiable=False),
    Case("random_gamma", lambda s, a: random.gamma(_key(s), a, (2, 3), a.dtype),
         [A(kind="int"), A(3, kind="pos")], differentiable=False),
    # The samplers built on these: rejection loops (while_loop) for the counts, gamma draws
    # (an implicit derivative, no finite difference of the draw) for t, and transforms of
    # standard draws, whose derivatives are the transforms'.
    Case("random_poisson", lambda s, lam: random.poisson(_key(s), 6.0 * lam, (2, 3)),
         [A(kind="int"), A(3, kind="pos")], differentiable=False),
    Case("random_binomial",
         lambda s, p: random.binomial(_key(s), 30.0, p / (1.0 + p), (2, 3), p.dtype),
         [A(kind="int"), A(3, kind="pos")], differentiable=False),
    Case("random_multinomial",
         lambda s, p: random.multinomial(_key(s), 20.0, p / fnp.sum(p, axis=-1, keepdims=True),
                                         dtype=p.dtype),
         [A(kind="int"), A(3, kind="pos")], differentiable=False),
    Case("random_t", lambda s, df: random.t(_key(s), df, (2, 3), df.dtype),
         [A(kind="int"), A(3, kind="pos")], differentiable=False),
    Case("random_lognormal", lambda s, c: random.lognormal(_key(s), c, (2, 3), c.dtype),
         [A(kind="int"), A(3)]),
    Case("random_wald", lambda s, m: random.wald(_key(s), m, (2, 3), m.dtype),
         [A(kind="int"), A(3, kind="pos")]),
    Case("random_triangular",
         lambda s, lo, d: random.triangular(_key(s), lo, lo + 0.5, lo + 1.0 + d * d, (2, 3),
                                            lo.dtype),
         [A(kind="int"), A(3), A(3)]),
    # A data point picked by weight (the weights stay equal: the pick is piecewise constant
    # in them) plus a draw of the kernel, smooth in the data.
    Case("random_gaussian_kde_resample",
         lambda s, data: gaussian_kde(data).resample(_key(s), (2, 3)),
         [A(kind="int"), A(2, 10)]),
]
