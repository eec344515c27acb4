"""functrans.tree: JAX's ``jax.tree`` names over functrans.tree_util."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import functrans as ft
import functrans.tree as tree
from functrans import tree_util

Point = collections.namedtuple("Point", "x y")
TREE = {"b": [1, (2, None)], "a": Point(3, 4)}


def test_leaves_flatten_unflatten_structure_agree_with_tree_util():
    assert tree.leaves(TREE) == tree_util.tree_leaves(TREE) == [3, 4, 1, 2]
    leaves, treedef = tree.flatten(TREE)
    assert (leaves, treedef) == tree_util.tree_flatten(TREE)
    assert tree.structure(TREE) == treedef
    assert tree.unflatten(treedef, [30, 40, 10, 20]) == {"b": [10, (20, None)],
                                                         "a": Point(30, 40)}


def test_is_leaf():
    is_leaf = lambda x: isinstance(x, Point)  # noqa: E731
    assert tree.leaves(TREE, is_leaf=is_leaf) == [Point(3, 4), 1, 2]
    assert tree.structure(TREE, is_leaf=is_leaf).num_leaves == 3
    assert tree.map(lambda p: p.x if isinstance(p, Point) else p, TREE,
                    is_leaf=is_leaf)["a"] == 3


def test_map_over_several_trees():
    assert tree.map(lambda x, y: x * y, TREE, TREE) == {"b": [1, (4, None)], "a": Point(9, 16)}
    # The other trees may have deeper structure where the first has leaves.
    assert tree.map(lambda x, y: (x, y), [1, 2], [(3, 4), 5]) == [(1, (3, 4)), (2, 5)]
    with pytest.raises(ValueError, match="tree structures differ"):
        tree.map(lambda x, y: x, [1, 2], [1, 2, 3])


def test_reduce():
    assert tree.reduce(lambda a, b: a + b, TREE) == 10
    assert tree.reduce(lambda a, b: a + b, TREE, 100) == 110
    assert tree.reduce(lambda a, b: a * b, [], initializer=1) == 1
    with pytest.raises(TypeError, match="no leaves and no initializer"):
        tree.reduce(lambda a, b: a + b, {"a": None})


def test_all():
    assert tree.all({"a": [True, 1], "b": np.bool_(True)})
    assert not tree.all([True, (0,)])
    assert tree.all([None, ()])  # no leaves


def test_transpose():
    outer = tree.structure([0, 0, 0])
    inner = tree.structure({"a": 0, "b": (0, 0)})
    rows = [{"a": i, "b": (10 * i, 100 * i)} for i in range(3)]
    out = tree.transpose(outer, inner, rows)
    assert out == {"a": [0, 1, 2], "b": ([0, 10, 20], [0, 100, 200])}
    assert tree.transpose(inner, outer, out) == rows
    assert tree.transpose(outer, None, rows) == out


def test_transpose_reports_mismatched_structures():
    outer, inner = tree.structure([0, 0]), tree.structure((0, 0))
    with pytest.raises(ValueError, match="outer structure"):
        tree.transpose(outer, inner, [(1, 2), (3, 4), (5, 6)])
    with pytest.raises(ValueError, match="inner tree 1"):
        tree.transpose(outer, inner, [(1, 2), [3, 4]])


def test_works_with_transforms():
    params = {"w": np.ones(3), "b": np.array(2.0)}
    grads = ft.grad(lambda p: tree.reduce(lambda a, b: a + b,
                                          tree.map(lambda v: (v ** 2).sum(), p)))(params)
    assert tree.structure(grads) == tree.structure(params)
    np.testing.assert_allclose(grads["w"], 2 * np.ones(3))


def test_namespace():
    assert set(dir(tree)) == set(tree.__all__)
    assert ft.tree is tree and "tree" in ft.__all__
    for name in tree.__all__:
        assert getattr(tree, name).__doc__, name


def test_broadcast_repeats_prefix_leaves_over_subtrees():
    full = {"a": [0, 0, (0,)], "b": Point(0, 0)}
    assert tree.broadcast({"a": 7, "b": Point(1, 2)}, full) == {"a": [7, 7, (7,)],
                                                                "b": Point(1, 2)}
    assert tree.broadcast(5, full) == tree.map(lambda _: 5, full)
    # is_leaf says where the prefix's leaves are; the result has full_tree's structure
    # flattened without it, as in JAX (a Point in full_tree still gets one copy per field).
    is_point = lambda x: isinstance(x, Point)  # noqa: E731
    assert tree.broadcast([1, 2], [Point(0, 0), [0, 0]], is_leaf=is_point) == [Point(1, 1),
                                                                                [2, 2]]
    assert tree.broadcast([Point(1, 2)], [[0, (0,)]], is_leaf=is_point) == [
        [Point(1, 2), (Point(1, 2),)]]


def test_broadcast_rejects_a_non_prefix():
    with pytest.raises(ValueError, match="tree_broadcast: prefix_tree"):
        tree.broadcast((1, 2), [0, 0])
    with pytest.raises(ValueError, match="not a prefix"):
        tree.broadcast((1, None), (0, {"a": 0}))


def test_reduce_associative_nests_as_a_balanced_tree():
    pair = lambda a, b: (a, b)  # noqa: E731
    assert tree.reduce_associative(pair, [1, 2, 3, 4, 5]) == ((1, 2), (3, (4, 5)))
    assert tree.reduce_associative(pair, [1, 2, 3, 4]) == ((1, 2), (3, 4))
    assert tree.reduce_associative(pair, {"x": 9}) == 9
    assert tree.reduce_associative(lambda a, b: a + b, TREE) == 10
    assert tree.reduce_associative(max, [], identity=-1) == -1
    with pytest.raises(TypeError, match="identity="):
        tree.reduce_associative(max, [None])


def test_static_marks_a_dataclass_field_as_structure():
    import dataclasses

    @tree_util.register_dataclass
    @dataclasses.dataclass
    class Layer:
        w: np.ndarray
        act: str = tree.static(default="relu", metadata={"doc": "activation"})

    layer = Layer(np.ones(2), "tanh")
    assert dataclasses.fields(Layer)[1].metadata == {"static": True, "doc": "activation"}
    assert len(tree.leaves(layer)) == 1
    assert tree.structure(layer) != tree.structure(Layer(np.ones(2)))
    g = ft.grad(lambda l: ft.numpy.sum(l.w ** 2))(layer)
    assert g.act == "tanh" and np.allclose(g.w, 2.0)
