"""Tests for functrans.tree_util: flattening, unflattening, tree_map and treedefs."""
from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

from functrans.tree_util import (PyTreeDef, register_pytree_node, tree_all, tree_flatten,
                                 tree_leaves, tree_map, tree_structure, tree_unflatten,
                                 treedef_is_leaf)

Point = namedtuple("Point", ["x", "y"])
OtherPoint = namedtuple("OtherPoint", ["x", "y"])  # same fields, different type


class Box:
    """A user-defined node: ``items`` are children, ``label`` is static data."""

    def __init__(self, items, label):
        self.items = list(items)
        self.label = label

    def __eq__(self, other):
        return (type(other) is Box and self.label == other.label
                and len(self.items) == len(other.items)
                and all(_same_tree(a, b) for a, b in zip(self.items, other.items)))

    def __repr__(self):
        return f"Box({self.items!r}, {self.label!r})"


register_pytree_node(Box, lambda b: (b.items, b.label), lambda label, xs: Box(xs, label))

ARRAY = np.arange(3.0)


def _same_tree(a, b) -> bool:
    """Structural equality of two pytrees whose leaves may be arrays."""
    a_leaves, a_def = tree_flatten(a)
    b_leaves, b_def = tree_flatten(b)
    return a_def == b_def and all(
        type(x) is type(y) and np.array_equal(x, y) for x, y in zip(a_leaves, b_leaves))


# (tree, its leaves in flattening order)
CASES = {
    "scalar": (1.5, [1.5]),
    "array": (ARRAY, [ARRAY]),
    "none": (None, []),
    "empty_tuple": ((), []),
    "empty_list": ([], []),
    "empty_dict": ({}, []),
    "tuple": ((1, 2, 3), [1, 2, 3]),
    "list": ([1, [2, 3]], [1, 2, 3]),
    "dict_sorted_keys": ({"b": 1, "c": 2, "a": 3}, [3, 1, 2]),
    "ordered_dict_keeps_order": (OrderedDict([("b", 1), ("a", 2)]), [1, 2]),
    "namedtuple": (Point(1, 2), [1, 2]),
    "none_inside": ([None, 1, (None, 2)], [1, 2]),
    "user_node": (Box([1, (2, 3)], "lbl"), [1, 2, 3]),
    "nested_mix": ({"y": (4, [5]), "x": [Point(1, (2, None)), 3],
                    "z": Box([{"q": 6}], 0)}, [1, 2, 3, 4, 5, 6]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_flatten_gives_expected_leaves(name):
    tree, expected = CASES[name]
    leaves, treedef = tree_flatten(tree)
    assert len(leaves) == len(expected) == treedef.num_leaves
    for leaf, want in zip(leaves, expected):
        assert leaf is want or (type(leaf) is type(want) and leaf == want)


@pytest.mark.parametrize("name", list(CASES))
def test_flatten_unflatten_round_trip(name):
    tree, _ = CASES[name]
    leaves, treedef = tree_flatten(tree)
    rebuilt = tree_unflatten(treedef, leaves)
    assert type(rebuilt) is type(tree)
    assert _same_tree(rebuilt, tree)
    assert tree_structure(rebuilt) == treedef
    # The leaves themselves are passed through, not copied.
    assert all(a is b for a, b in zip(tree_leaves(rebuilt), leaves))
    # treedef.unflatten is the same operation.
    assert _same_tree(treedef.unflatten(leaves), tree)


@pytest.mark.parametrize("name", list(CASES))
def test_unflatten_with_new_leaves(name):
    tree, expected = CASES[name]
    treedef = tree_structure(tree)
    new_leaves = [f"leaf{i}" for i in range(len(expected))]
    rebuilt = tree_unflatten(treedef, new_leaves)
    assert tree_leaves(rebuilt) == new_leaves
    assert tree_structure(rebuilt) == treedef


def test_unflatten_preserves_container_types():
    tree = {"a": [Point(1, (2,))], "b": OrderedDict([("z", 3), ("y", Box([4], "k"))])}
    out = tree_unflatten(tree_structure(tree), [10, 20, 30, 40])
    assert type(out["a"]) is list and type(out["a"][0]) is Point
    assert type(out["a"][0].y) is tuple
    assert type(out["b"]) is OrderedDict and list(out["b"]) == ["z", "y"]
    assert isinstance(out["b"]["y"], Box) and out["b"]["y"].label == "k"
    assert out == {"a": [Point(10, (20,))], "b": OrderedDict([("z", 30), ("y", Box([40], "k"))])}


def test_dict_keys_are_sorted_and_insertion_order_is_irrelevant():
    d1 = {"b": 1, "a": 2, "c": 3}
    d2 = {"c": 30, "a": 20, "b": 10}
    assert tree_leaves(d1) == [2, 1, 3]
    assert tree_structure(d1) == tree_structure(d2)
    assert hash(tree_structure(d1)) == hash(tree_structure(d2))
    rebuilt = tree_unflatten(tree_structure(d1), ["A", "B", "C"])
    assert list(rebuilt) == ["a", "b", "c"]
    assert rebuilt == {"a": "A", "b": "B", "c": "C"}


def test_none_is_an_empty_node_not_a_leaf():
    leaves, treedef = tree_flatten(None)
    assert leaves == [] and treedef.num_leaves == 0
    assert tree_unflatten(treedef, []) is None
    assert tree_leaves({"a": None, "b": (None, 1)}) == [1]
    assert tree_structure(None) != tree_structure(1)
    assert tree_structure((None,)) != tree_structure((1,))


def test_is_leaf_stops_flattening():
    tree = {"a": (1, 2), "b": [(3, 4), 5]}
    leaves, treedef = tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), (3, 4), 5]
    assert tree_unflatten(treedef, leaves) == tree
    assert tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]


def test_user_registered_node_uses_its_aux_data():
    a, b = Box([1, 2], "left"), Box([1, 2], "right")
    assert tree_leaves(a) == tree_leaves(b) == [1, 2]
    assert tree_structure(a) != tree_structure(b)
    assert tree_structure(a) == tree_structure(Box([7, 8], "left"))
    assert tree_structure(a) != tree_structure(Box([1, 2, 3], "left"))
    doubled = tree_map(lambda x: 2 * x, Box([1, (2, {"k": 3})], "lbl"))
    assert doubled == Box([2, (4, {"k": 6})], "lbl")


def test_registering_twice_is_an_error():
    with pytest.raises(ValueError, match="Box"):
        register_pytree_node(Box, lambda b: (b.items, None), lambda _, xs: Box(xs, None))


# ------------------------------------------------------------------------------------------
# tree_map
# ------------------------------------------------------------------------------------------


def test_tree_map_single_tree():
    tree = {"w": np.ones(2), "layers": [Point(1.0, 2.0), (3.0,)], "none": None}
    out = tree_map(lambda x: x * 10, tree)
    assert tree_structure(out) == tree_structure(tree)
    assert out["none"] is None
    np.testing.assert_array_equal(out["w"], 10 * np.ones(2))
    assert out["layers"] == [Point(10.0, 20.0), (30.0,)]


def test_tree_map_several_trees():
    t1 = {"a": 1, "b": (2, Point(3, 4))}
    t2 = {"a": 10, "b": (20, Point(30, 40))}
    t3 = {"b": (200, Point(300, 400)), "a": 100}  # other insertion order: same structure
    out = tree_map(lambda x, y, z: x + y + z, t1, t2, t3)
    assert out == {"a": 111, "b": (222, Point(333, 444))}


def test_tree_map_calls_function_once_per_leaf_in_order():
    seen = []
    tree_map(lambda x, y: seen.append((x, y)), [3, {"b": 1, "a": 2}], [30, {"a": 20, "b": 10}])
    assert seen == [(3, 30), (2, 20), (1, 10)]


def test_tree_map_with_is_leaf():
    tree = [(1, 2), (3, 4)]
    out = tree_map(lambda pair: pair[0] * pair[1], tree, is_leaf=lambda x: isinstance(x, tuple))
    assert out == [2, 12]


def test_tree_map_other_trees_may_be_deeper():
    # As in JAX: each further tree must have the first tree's structure as a prefix; the
    # subtree at each leaf position is passed whole.
    out = tree_map(lambda x, y: (x, y), (1, 2), ((3, 4), {"k": 5}))
    assert out == ((1, (3, 4)), (2, {"k": 5}))
    assert tree_map(lambda x, y: y, [None, 1], [None, [2, 3]]) == [None, [2, 3]]


MISMATCHED = {
    "different_length": ((1, 2), (1, 2, 3)),
    "tuple_vs_list": ((1, 2), [1, 2]),
    "namedtuple_vs_tuple": (Point(1, 2), (1, 2)),
    "two_namedtuple_types": (Point(1, 2), OtherPoint(1, 2)),
    "dict_keys": ({"a": 1}, {"b": 1}),
    "node_vs_leaf": ((1, (2, 3)), (1, 2)),
    "none_vs_leaf": ((None, 1), (1, 1)),
    "user_node_aux": (Box([1], "x"), Box([1], "y")),
}


@pytest.mark.parametrize("name", list(MISMATCHED))
def test_tree_map_mismatched_structures_raise(name):
    a, b = MISMATCHED[name]
    with pytest.raises(ValueError, match="tree_map"):
        tree_map(lambda x, y: x, a, b)


# ------------------------------------------------------------------------------------------
# Treedefs
# ------------------------------------------------------------------------------------------


def test_tree_leaves_and_structure_agree_with_flatten():
    tree = {"a": [1, (2, None)], "b": Point(3, Box([4], 0))}
    leaves, treedef = tree_flatten(tree)
    assert tree_leaves(tree) == leaves == [1, 2, 3, 4]
    assert tree_structure(tree) == treedef
    assert treedef.num_leaves == 4
    # Nodes: dict, list, 1, tuple, 2, None, Point, 3, Box, 4.
    assert treedef.num_nodes == 10


def test_treedef_is_leaf():
    assert treedef_is_leaf(tree_structure(1.0))
    assert treedef_is_leaf(tree_structure(ARRAY))
    assert not treedef_is_leaf(tree_structure((1.0,)))
    assert not treedef_is_leaf(tree_structure([]))


EQUAL_PAIRS = [
    ((1, 2), ("a", np.zeros(3))),
    ({"x": [1], "y": None}, {"y": None, "x": [ARRAY]}),
    (Point(1, (2, 3)), Point("p", ("q", "r"))),
    (Box([1], "k"), Box([2.0], "k")),
    (1.0, np.ones((2, 2))),
]

UNEQUAL_PAIRS = [pytest.param(a, b, id=name) for name, (a, b) in MISMATCHED.items()] + [
    pytest.param([1, 2], [[1], 2], id="leaf_vs_list"),
    pytest.param((), [], id="empty_tuple_vs_list"),
    pytest.param((), None, id="empty_tuple_vs_none"),
    pytest.param({}, (), id="empty_dict_vs_tuple"),
]


@pytest.mark.parametrize("a,b", EQUAL_PAIRS)
def test_treedef_equality_and_hash(a, b):
    da, db = tree_structure(a), tree_structure(b)
    assert isinstance(da, PyTreeDef)
    assert da == db and not da != db
    assert hash(da) == hash(db)
    assert len({da, db}) == 1
    assert {da: "value"}[db] == "value"


@pytest.mark.parametrize("a,b", UNEQUAL_PAIRS)
def test_treedef_inequality(a, b):
    da, db = tree_structure(a), tree_structure(b)
    assert da != db and not da == db
    assert len({da, db}) == 2


def test_treedef_is_not_equal_to_other_objects():
    assert tree_structure((1,)) != (1,)
    assert tree_structure(1) != "*"


def test_treedef_repr_is_readable():
    treedef = tree_structure({"b": None, "a": (1, [2, Point(3, 4)])})
    assert repr(treedef) == "PyTreeDef({'a': (*, [*, Point(*, *)]), 'b': None})"
    assert repr(tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tree_structure(1)) == "PyTreeDef(*)"


@pytest.mark.parametrize("num_leaves", [1, 3])
def test_unflatten_wrong_number_of_leaves_raises(num_leaves):
    treedef = tree_structure((1, 2))
    with pytest.raises(ValueError, match="leaves"):
        tree_unflatten(treedef, list(range(num_leaves)))


def test_tree_all():
    assert tree_all({"a": [True, 1], "b": (True,)})
    assert not tree_all({"a": [True, 0], "b": (True,)})
    assert tree_all(None)
