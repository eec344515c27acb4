"""Gradient checking: compare functrans's derivatives with finite differences.

Type of the transform::

    gradcheck : (f, options) -> (args -> GradcheckResult)      raises GradcheckError

Two strategies, both on the *realified* function (every complex number is two real
coordinates, its real and imaginary part):

* **full mode** builds the whole numerical Jacobian from central differences, evaluating
  all perturbed points at once with ``vmap`` (in chunks), and the analytic Jacobian with
  ``vmap`` of the pullback (reverse mode) and of ``jvp`` (forward mode); every entry is
  compared.
* **fast mode** draws unit directions ``u`` (inputs) and ``v`` (outputs) and compares the
  number ``vᵀ J u``: two evaluations of ``f`` give it numerically, one pullback and one
  ``jvp`` give it analytically.

Complex convention (JAX's, which functrans follows): ``jvp`` pushes a complex tangent
through the real-linear map ``J``; the pullback is its plain transpose for the pairing
``Re(a·b)`` (no conjugation).  So for a real-valued ``f`` of ``z = x + iy`` the pullback of
``1`` is ``∂f/∂x − i ∂f/∂y = 2 ∂f/∂z``; e.g. for ``|z|²`` it is ``2·conj(z)``.  The
realified Jacobian row of an output coordinate ``c`` (``1`` for a real part, ``1j`` for an
imaginary part) is ``conj(pullback(conj(c)))``, split into real and imaginary parts.

The package, one module per concern, lower ones first: ``options`` (defaults and
options), ``realify`` (complex values as real coordinates, random directions),
``pictures`` (heat maps and Jacobian drawings), ``results`` (errors, the result and its
report), ``problem`` (the function on its flat inputs),
``jacobians`` (numerical and analytic Jacobians), ``checks`` (the individual checks) and
``transform`` (the ``gradcheck`` entry point).  The submodules' names are the package's
internal API, used by ``functrans.testing``; users import from ``functrans`` or this
package's ``__all__``.
"""
from __future__ import annotations

from functrans.gradcheck.options import SEED_ENV_VAR, default_tolerance
from functrans.gradcheck.results import (Check, Entry, GradcheckError, GradcheckResult,
                                          NondifferentiableError)
from functrans.gradcheck.transform import gradcheck

__all__ = ["gradcheck", "GradcheckError", "NondifferentiableError", "GradcheckResult",
           "Check", "Entry", "default_tolerance", "SEED_ENV_VAR"]


def __dir__() -> list[str]:
    return sorted(__all__)
