"""Sweep cases of the integral special functions: the primitives of
functrans/primitives/special_integrals.py (``PRIMITIVE_CASES``, checked by
tests/test_primitives.py) and their ``functrans.scipy.special`` functions against SciPy
(``NUMPY_CASES``, checked by tests/test_numpy.py: values and dtypes, derivatives in both
modes to second order, vmap against a loop, float32, complex for ``wofz``).

Integer arguments (the order of ``expn``, the degree and order of ``sph_harm_y``) come from
integer draws, which the derivative checks leave alone."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import functrans.numpy as fnp
import functrans.scipy.special as S
from functrans import lax
from functrans.primitives import special_integrals as P
from sweep import C64, C128, F32, F64, A, Case, numpy_case


def _order(n, like):
    """A non-negative integer order ``|n|`` in the float dtype of ``like``."""
    return lax.convert_element_type(lax.abs(n), like.dtype)


def _parts(w):
    return fnp.stack([lax.real(w), lax.imag(w)])


PRIMITIVE_CASES = [
    Case("erfcx", P.erfcx, [A(3, 4)]),
    Case("dawsn", P.dawsn, [A(3, 4)]),
    Case("exp1", P.exp1, [A(3, 4, kind="pos")]),
    Case("expi", P.expi, [A(3, 4, kind="away0")]),
    # Orders 0 to 3: the derivative of E_0 has its own formula.
    Case("expn", lambda n, x: P.expn(_order(n, x), x), [A(3, 4, kind="int"),
                                                         A(3, 4, kind="pos")]),
    Case("spence", P.spence, [A(3, 4, kind="pos")]),
    Case("sici_si", P.sici_si, [A(3, 4)]),
    Case("sici_ci", P.sici_ci, [A(3, 4, kind="away0")]),
    Case("fresnel_s", P.fresnel_s, [A(3, 4)]),
    Case("fresnel_c", P.fresnel_c, [A(3, 4)]),
    Case("owens_t", P.owens_t, [A(3, 4), A(4)]),
    # The primitive takes complex operands only: z = x + i y from two real draws, and the
    # real and imaginary parts of w(z) side by side (the sweep's gradients need a real sum).
    Case("wofz", lambda x, y: _parts(P.wofz(lax.complex(x, y))), [A(3, 4), A(3, 4)]),
]


def _like_inputs(reference):
    """SciPy's ``reference`` in the dtype functrans gives: the inputs' promoted float dtype
    (float64 for integers), or the complex type of that precision where SciPy's result is
    complex (SciPy computes some kernels in double precision whatever the input)."""
    def cast(out, dtype):
        out = np.asarray(out)
        if out.dtype.kind == "c":
            return out.astype(np.result_type(dtype, np.complex64))
        return out.astype(dtype)

    def f(*xs):
        out = reference(*xs)
        dtype = np.result_type(*[x.dtype for x in xs if hasattr(x, "dtype") and
                                 x.dtype.kind in "fc"] or [np.float64])
        if isinstance(out, tuple):
            return tuple(cast(o, dtype) for o in out)
        return cast(out, dtype)
    return f


def _case(name, fun, reference, *args, dtypes=(F64, F32), diff=True, tol=1e-7):
    return numpy_case(f"scipy_{name}", lambda m, *xs: fun(*xs), *args, dtypes=dtypes,
                      diff=diff, tol=tol, reference=_like_inputs(reference))


def _degree_order(n, m):
    """A degree in 0..3 and an order with ``|m| <= n`` from two integer draws."""
    degree = fnp.abs(n)
    return degree, fnp.clip(m, -degree, degree)


def _scipy_sph_harm_y(n, m, theta, phi):
    if not hasattr(ss, "sph_harm_y"):
        pytest.skip("scipy.special.sph_harm_y needs SciPy 1.15")
    degree = np.abs(n)
    return ss.sph_harm_y(degree, np.clip(m, -degree, degree), theta, phi)


def _sph_harm_y(n, m, theta, phi):
    degree, order = _degree_order(n, m)
    return S.sph_harm_y(degree, order, theta, phi, n_max=3)


NUMPY_CASES = [
    _case("erfcx", S.erfcx, ss.erfcx, A(3, 4)),
    _case("dawsn", S.dawsn, ss.dawsn, A(3, 4)),
    _case("exp1", S.exp1, ss.exp1, A(3, 4, kind="pos")),
    _case("expi", S.expi, ss.expi, A(3, 4, kind="away0")),
    _case("expn", lambda n, x: S.expn(abs(n), x), lambda n, x: ss.expn(abs(n), x),
          A(3, 4, kind="int"), A(3, 4, kind="pos")),
    _case("sici", S.sici, ss.sici, A(3, 4, kind="away0")),
    _case("fresnel", S.fresnel, ss.fresnel, A(3, 4)),
    _case("spence", S.spence, ss.spence, A(3, 4, kind="pos")),
    _case("owens_t", S.owens_t, ss.owens_t, A(3, 4), A(3, 4)),
    _case("wofz", S.wofz, ss.wofz, A(3, 4), dtypes=(F64, F32, C128, C64)),
    _case("rel_entr", S.rel_entr, ss.rel_entr, A(3, 4, kind="pos"), A(3, 4, kind="pos")),
    _case("kl_div", S.kl_div, ss.kl_div, A(3, 4, kind="pos"), A(4, kind="pos")),
    # Zeros and negative entries: the edge conventions (values and batching only; the
    # functions jump there).
    _case("rel_entr_edges", S.rel_entr, ss.rel_entr, A(3, 4, kind="zeros"),
          A(3, 4, kind="grid"), diff=False),
    _case("kl_div_edges", S.kl_div, ss.kl_div, A(3, 4, kind="zeros"), A(3, 4, kind="grid"),
          diff=False),
    _case("sph_harm_y", _sph_harm_y, _scipy_sph_harm_y, A(3, 4, kind="int"),
          A(3, 4, kind="int"), A(3, 4, kind="pos"), A(3, 4)),
]
