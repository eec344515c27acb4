"""Draws the pictures in docs/gradcheck.md and docs/api.md (needs matplotlib and
graphviz's ``dot``): ``python docs/images/make_images.py`` from the repository root."""
import os

import numpy as np

import functrans as ft
import functrans.numpy as fnp

HERE = os.path.dirname(os.path.abspath(__file__))
W = np.array([[1.0, -0.5], [0.25, 2.0], [-1.0, 0.5]])
# The bug: the JVP rule scales the tangent of x[1, 2] by 1.02.
BUG = np.ones((2, 3))
BUG[1, 2] = 1.02


@ft.custom_jvp
def layer(x):
    return fnp.tanh(x) @ W


@layer.defjvp
def layer_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return layer(x), ((1 - fnp.tanh(x) ** 2) * t * BUG) @ W


def model(x):
    return fnp.sin(layer(x))


def main():
    x = np.linspace(-0.6, 0.9, 6).reshape(2, 3)
    result = ft.gradcheck(model, raise_exception=False)(x)
    result.save_heatmap(os.path.join(HERE, "gradcheck_heatmap.png"))
    result.save_jacobians(os.path.join(HERE, "gradcheck_jacobians.png"))
    fast = ft.gradcheck(model, fast_mode=True, order=2, raise_exception=False)(x)
    fast.save_heatmap(os.path.join(HERE, "gradcheck_fast.png"))
    ft.make_jaxpr(ft.grad(lambda x: fnp.sum(fnp.tanh(x))))(np.ones(3)).render(
        os.path.join(HERE, "jaxpr_grad_tanh.svg"), format="svg")


if __name__ == "__main__":
    main()
