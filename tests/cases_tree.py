"""Sweep cases of ``functrans.tree`` (JAX's ``jax.tree``): each function used on a pytree of
traced arrays inside a computation, against the same computation written out by hand for
the fixed structure of ``_make`` (independent of the function under test: no ``tree.*``
in a reference).  tests/test_tree_cases.py checks values, ``jit``, derivatives in both
modes to second order (numerically, and ``grad`` against the reference's) and ``vmap``
against a loop (see ``sweep.TreeCase``)."""
from __future__ import annotations

import collections
import dataclasses
import operator

import numpy as np

import functrans.numpy as fnp
import functrans.tree as tree
from functrans.tree_util import keystr, register_dataclass
from sweep import tree_case

Point = collections.namedtuple("Point", "x y")


def _make(rng):
    """``{"b": [vector, scalar], "p": Point(vector, scalar), "w": matrix}``: leaves in the
    order b[0], b[1], p.x, p.y, w (dict keys sorted)."""
    def draw(*shape):
        return np.asarray(rng.standard_normal(shape))
    return {"w": draw(2, 3), "b": [draw(2), draw()], "p": Point(draw(3), draw())}


def _by_hand(t, f):
    """``f`` applied to each leaf of a tree of ``_make``'s structure, written out."""
    return {"b": [f(t["b"][0]), f(t["b"][1])], "p": Point(f(t["p"].x), f(t["p"].y)),
            "w": f(t["w"])}


def _leaves_by_hand(t):
    return [t["b"][0], t["b"][1], t["p"].x, t["p"].y, t["w"]]


# keystr of each leaf's path, in leaf order, as JAX writes them
_PATHS = ["['b'][0]", "['b'][1]", "['p'].x", "['p'].y", "['w']"]


def _weighted_by_paths(t):
    weights = iter(len(p) for p in _PATHS)
    return _by_hand(t, lambda x: x * next(weights))


def _flatten_unflatten(t):
    leaves, treedef = tree.flatten(t)
    return tree.unflatten(treedef, [x * (i + 1) for i, x in enumerate(leaves)])


def _flatten_unflatten_by_hand(t):
    factors = iter(range(1, 6))
    return _by_hand(t, lambda x: x * next(factors))


def _all(t):
    small = tree.map(lambda x: x.ndim < 3, t)            # all True
    vectors = tree.map(lambda x: x.ndim == 1, t)         # not all
    scale = (2.0 if tree.all(small) else 3.0) + (5.0 if tree.all(vectors) else 7.0)
    return tree.map(lambda x: x * scale, t)


def _transpose(t):
    pairs = [(x, fnp.sin(x)) for x in tree.leaves(t)]
    return tree.transpose(tree.structure([0] * len(pairs)), tree.structure((0, 0)), pairs)


def _broadcast(t):
    prefix = {"b": fnp.sum(t["w"]), "p": t["b"][1], "w": 2.0}
    full = tree.broadcast(prefix, t)
    return tree.map(operator.mul, full, t)


def _broadcast_by_hand(t):
    s, c = fnp.sum(t["w"]), t["b"][1]
    return {"b": [s * t["b"][0], s * t["b"][1]], "p": Point(c * t["p"].x, c * t["p"].y),
            "w": 2.0 * t["w"]}


def _static_field(t):
    # tree.static is called where programs call it, in a class definition: the class is
    # made here so that the call happens inside the case.
    @register_dataclass
    @dataclasses.dataclass
    class Scaled:
        value: object
        factor: float = tree.static(default=3.0)
    scaled = tree.map(lambda x: x * 2.0, Scaled(t["w"], 0.5))
    assert scaled.factor == 0.5 and len(tree.leaves(scaled)) == 1  # the factor is structure
    return scaled.value * scaled.factor


TREE_CASES = [
    tree_case("map", lambda t: tree.map(fnp.sin, t), _make, lambda t: _by_hand(t, fnp.sin)),
    tree_case("map_two_trees", lambda t: tree.map(lambda a, b: a * b, t, tree.map(fnp.cos, t)),
              _make, lambda t: _by_hand(t, lambda x: x * fnp.cos(x))),
    tree_case("leaves", lambda t: [fnp.sum(x * x) for x in tree.leaves(t)], _make,
              lambda t: [fnp.sum(x * x) for x in _leaves_by_hand(t)]),
    tree_case("flatten_unflatten", _flatten_unflatten, _make, _flatten_unflatten_by_hand),
    tree_case("structure", lambda t: tree.unflatten(tree.structure(t),
                                                    [fnp.exp(x) for x in tree.leaves(t)]),
              _make, lambda t: _by_hand(t, fnp.exp)),
    tree_case("reduce", lambda t: tree.reduce(operator.add, tree.map(
        lambda x: fnp.sum(fnp.sin(x)), t)), _make,
        lambda t: sum(fnp.sum(fnp.sin(x)) for x in _leaves_by_hand(t))),
    tree_case("reduce_initializer", lambda t: tree.reduce(
        lambda acc, x: acc * 0.5 + fnp.sum(x ** 2), t, 1.0), _make,
        lambda t: ((((1.0 * 0.5 + fnp.sum(t["b"][0] ** 2)) * 0.5 + t["b"][1] ** 2) * 0.5
                    + fnp.sum(t["p"].x ** 2)) * 0.5 + t["p"].y ** 2) * 0.5
        + fnp.sum(t["w"] ** 2)),
    tree_case("reduce_associative", lambda t: tree.reduce_associative(
        operator.mul, tree.map(lambda x: fnp.sum(fnp.cos(x)), t)), _make,
        lambda t: fnp.prod(fnp.stack([fnp.sum(fnp.cos(x)) for x in _leaves_by_hand(t)]))),
    tree_case("all", _all, _make, lambda t: _by_hand(t, lambda x: x * 9.0)),
    tree_case("transpose", _transpose, _make,
              lambda t: ([x for x in _leaves_by_hand(t)],
                         [fnp.sin(x) for x in _leaves_by_hand(t)])),
    tree_case("broadcast", _broadcast, _make, _broadcast_by_hand),
    tree_case("map_with_path", lambda t: tree.map_with_path(
        lambda path, x: x * len(keystr(path)), t), _make, _weighted_by_paths),
    tree_case("flatten_with_path", lambda t: tree.unflatten(*(
        lambda pairs, treedef: (treedef, [x * len(keystr(p)) for p, x in pairs]))(
            *tree.flatten_with_path(t))), _make, _weighted_by_paths),
    tree_case("leaves_with_path", lambda t: [fnp.sum(x) * len(keystr(p))
                                             for p, x in tree.leaves_with_path(t)], _make,
              lambda t: [fnp.sum(x) * len(p) for p, x in zip(_PATHS, _leaves_by_hand(t))]),
    tree_case("static", _static_field, _make, lambda t: t["w"] * 2.0 * 0.5),
]
