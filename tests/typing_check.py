"""What a type checker sees of functrans's public API: mypy checks this file (see
tests/test_packaging.py), and each ``reveal_type`` line's comment is the type mypy must
reveal there. Nothing here runs: the calls sit under ``TYPE_CHECKING``.

Transforms keep the wrapped function's parameters where the result takes the same
arguments (``grad``, ``value_and_grad``, ``jacfwd``, ``jacrev``, ``hessian``, ``vmap``,
``jit``, ``make_jaxpr``), so a call with a wrong argument is an error; ``grad``'s result
is ``Any`` (the gradient has the argument's structure, which typing cannot say).
``jvp``, ``vjp`` and ``linearize`` say what they return, ``has_aux`` included.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import functrans as ft

if TYPE_CHECKING:
    from typing_extensions import reveal_type

    def loss(w: float, b: float) -> float:
        return w * b

    def loss_aux(w: float) -> tuple[float, str]:
        return w, "aux"

    # grad keeps the parameters; the gradient's type is Any.
    reveal_type(ft.grad(loss))  # revealed: def (w: float, b: float) -> Any
    reveal_type(ft.grad(loss)(1.0, 2.0))  # revealed: Any
    ft.grad(loss)("not a float", 2.0)  # type: ignore[arg-type]
    reveal_type(ft.value_and_grad(loss))  # revealed: def (w: float, b: float) -> tuple[Any, Any]
    reveal_type(ft.jacrev(loss, argnums=1))  # revealed: def (w: float, b: float) -> Any
    reveal_type(ft.hessian(loss))  # revealed: def (w: float, b: float) -> Any

    # jvp: (outputs, tangents of the outputs), plus the auxiliary data with has_aux=True.
    reveal_type(ft.jvp(loss, (1.0, 2.0), (1.0, 0.0)))  # revealed: tuple[float, float]
    reveal_type(ft.jvp(loss_aux, (1.0,), (1.0,), has_aux=True))  # revealed: tuple[float, float, str]

    # vjp: (outputs, the pullback returning one cotangent per primal).
    reveal_type(ft.vjp(loss, 1.0, 2.0))  # revealed: tuple[float, def (Any) -> tuple[Any, ...]]
    reveal_type(ft.vjp(loss_aux, 1.0, has_aux=True))  # revealed: tuple[float, def (Any) -> tuple[Any, ...], str]
    y, f_vjp = ft.vjp(loss, 1.0, 2.0)
    reveal_type(f_vjp(1.0))  # revealed: tuple[Any, ...]

    # linearize: (outputs, the linear map from input tangents to output tangents).
    reveal_type(ft.linearize(loss, 1.0, 2.0))  # revealed: tuple[float, def (*Any, **Any) -> float]

    # vmap, pmap and jit keep the whole signature (shapes are not part of the types).
    reveal_type(ft.vmap(loss))  # revealed: def (w: float, b: float) -> float
    reveal_type(ft.pmap(loss, "i"))  # revealed: def (w: float, b: float) -> float
    reveal_type(ft.jit(loss))  # revealed: functrans.primitives.jit.Jitted[[w: float, b: float], float]
    reveal_type(ft.jit(loss)(1.0, 2.0))  # revealed: float
    ft.jit(loss)(1.0)  # type: ignore[call-arg]
    reveal_type(ft.jit(static_argnums=1)(loss))  # revealed: functrans.primitives.jit.Jitted[[w: float, b: float], float]

    # Staging.
    reveal_type(ft.make_jaxpr(loss)(1.0, 2.0))  # revealed: functrans.core.ClosedJaxpr
    reveal_type(ft.make_jaxpr(loss, return_shape=True)(1.0, 2.0))  # revealed: tuple[functrans.core.ClosedJaxpr, Any]
    reveal_type(ft.eval_shape(loss, 1.0, 2.0))  # revealed: Any
    reveal_type(ft.linear_transpose(loss, 1.0, 2.0))  # revealed: def (*Any, **Any) -> tuple[Any, ...]

    # The version string.
    reveal_type(ft.__version__)  # revealed: str
