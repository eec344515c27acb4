"""``functrans.scipy.cluster.vq``: vector quantisation, as ``jax.scipy.cluster.vq``.

>>> import numpy as np, functrans.scipy.cluster.vq as fvq
>>> code, dist = fvq.vq(np.array([[0.1, 0.0], [2.0, 2.2]]), np.array([[0.0, 0.0], [2.0, 2.0]]))
>>> code, np.round(dist, 6)
(array([0, 1]), array([0.1, 0.2]))
"""
from __future__ import annotations

import functrans.numpy as fnp
from functrans.core import get_aval
from functrans.scipy._util import inexact_all

__all__ = ["vq"]


def vq(obs, code_book, check_finite: bool = True):
    """The code (row of ``code_book``) nearest to each observation (row of ``obs``) in
    Euclidean distance, and that distance: ``(code, dist)``, both of shape ``(M,)``, as
    ``scipy.cluster.vq.vq``.  ``obs`` is ``(M, N)`` and ``code_book`` ``(K, N)``; 1-D
    arguments are scalar observations and codes.  ``check_finite`` is accepted and ignored,
    as in JAX.  ``dist`` is differentiable in both arguments (the code is piecewise
    constant); at an observation equal to its code the derivative of the distance is
    undefined, as for ``numpy.linalg.norm``.

    >>> import numpy as np, functrans.scipy.cluster.vq as fvq
    >>> fvq.vq(np.array([0.2, 0.9, 2.6]), np.array([0.0, 1.0, 3.0]))[0]
    array([0, 1, 2])
    """
    del check_finite
    obs, code_book = inexact_all(obs, code_book)
    o, c = get_aval(obs), get_aval(code_book)
    if o.ndim != c.ndim:
        raise ValueError(f"vq: obs and code_book must have the same rank, got obs of shape "
                         f"{o.shape} and code_book of shape {c.shape}")
    if o.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    elif o.ndim != 2:
        raise ValueError(f"vq: obs and code_book must be 1-D or 2-D, got shapes {o.shape} and "
                         f"{c.shape}")
    if get_aval(obs).shape[1] != get_aval(code_book).shape[1]:
        raise ValueError(f"vq: obs and code_book must have the same number of features, got "
                         f"obs of shape {o.shape} and code_book of shape {c.shape}")
    dist = fnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = fnp.argmin(dist, axis=-1)
    return code, fnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
