"""A tour of functrans on a tiny MLP (3 -> 4 -> 1, tanh, float64): ``python -m functrans``.

The parameters are a plain dict of NumPy arrays (a pytree); the model is written with
``functrans.numpy`` so that every transform can trace it.  Prints the loss, its gradient,
a JVP, per-example gradients (vmap of grad) and the jaxpr of the loss, whose inputs are
named by their paths in the arguments.
"""
import inspect

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans.tree_util import keystr, tree_flatten_with_path

#: entries shown of each printed array
SHOWN = 3


def init_params(rng):
    return {"w1": rng.normal(size=(3, 4)), "b1": np.zeros(4),
            "w2": rng.normal(size=(4, 1)), "b2": np.zeros(1)}


def predict(params, x):
    hidden = fnp.tanh(x @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def loss(params, x, y):
    return fnp.mean((predict(params, x) - y) ** 2)


def heading(title):
    print(f"\n== {title} ==")


def head(array, count=SHOWN):
    """The first ``count`` entries of ``array`` (flattened), labelled when that is not all.

    >>> head(np.arange(5.0)), head(np.arange(2.0))
    ('first 3 of 5: [0. 1. 2.]', '[0. 1.]')
    """
    flat = np.ravel(array)
    if flat.size <= count:
        return str(flat)
    return f"first {count} of {flat.size}: {flat[:count]}"


def input_legend(fun, jaxpr, *args):
    """Which argument leaf each input of ``jaxpr`` (traced from ``fun(*args)``) is: lines
    ``a = params['b1']``, in the jaxpr's order (the leaves of the arguments, a dict's in
    sorted key order).

    >>> def f(p, x):
    ...     return p["w"] * x
    ...
    >>> print(input_legend(f, ft.make_jaxpr(f)({"w": 1.0}, 2.0), {"w": 1.0}, 2.0))
    a = p['w']
    b = x
    """
    names = list(inspect.signature(fun).parameters)
    header = str(jaxpr).splitlines()[0]  # "{ lambda ; a:f64[4] b:f64[1] ... . let"
    binders = header.split(";", 1)[1].rsplit(".", 1)[0].split()
    pairs, _ = tree_flatten_with_path(args)
    lines = []
    for binder, (path, _) in zip(binders, pairs):
        argument = names[path[0].idx] if path[0].idx < len(names) else f"args[{path[0].idx}]"
        lines.append(f"{binder.split(':')[0]} = {argument}{keystr(path[1:])}")
    return "\n".join(lines)


def main():
    with np.printoptions(precision=4, suppress=True):  # the caller's options afterwards
        _demo()


def _demo():
    rng = np.random.default_rng(0)
    params = init_params(rng)
    x = rng.normal(size=(5, 3))          # a batch of 5 examples
    y = np.sin(x.sum(axis=1, keepdims=True))

    heading("loss(params, x, y)")
    print(f"{float(loss(params, x, y)):.6f}")

    heading("grad(loss)(params, x, y): a dict shaped like params")
    grads = ft.grad(loss)(params, x, y)
    for name, g in grads.items():
        print(f"{name:>3} {str(g.shape):7} {head(g)}")

    heading("jvp(predict) along a random direction in parameter space")
    direction = {k: rng.normal(size=v.shape) for k, v in params.items()}
    out, tangent_out = ft.jvp(lambda p: predict(p, x), (params,), (direction,))
    print("outputs:       ", out.ravel())
    print("d outputs/d t: ", tangent_out.ravel())

    heading("per-example gradients: vmap(grad(loss), in_axes=(None, 0, 0))")
    per_example = ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))(params, x, y)
    print("w1 gradients:", per_example["w1"].shape, "(one 3x4 gradient per example)")
    mean_grad = per_example["w1"].mean(axis=0)
    print("their mean equals grad(loss)['w1']:", np.allclose(mean_grad, grads["w1"]))

    heading("make_jaxpr(loss)")
    jaxpr = ft.make_jaxpr(loss)(params, x, y)
    print("inputs (the arguments' leaves; a dict's in sorted key order):")
    print("  " + input_legend(loss, jaxpr, params, x, y).replace("\n", "\n  "))
    print(jaxpr)


if __name__ == "__main__":
    main()
