"""Tests for functrans.tree_util: flattening, unflattening, tree_map and treedefs."""
from __future__ import annotations

import inspect
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import tree_util
from functrans.tree_util import (DictKey, FlattenedIndexKey, GetAttrKey, Partial, PyTreeDef,
                                 SequenceKey, all_leaves, flatten_one_level,
                                 flatten_one_level_with_keys, is_tree_node, keystr,
                                 register_pytree_node, register_pytree_node_class,
                                 register_pytree_with_keys_class, register_static, tree_all,
                                 tree_broadcast, tree_flatten, tree_leaves,
                                 tree_leaves_with_path, tree_map, tree_reduce_associative,
                                 tree_structure, tree_transpose, tree_unflatten,
                                 treedef_children, treedef_is_leaf, treedef_tuple)

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


# ------------------------------------------------------------------------------------------
# Class decorators: register_pytree_node_class, register_pytree_with_keys_class,
# register_static
# ------------------------------------------------------------------------------------------


@register_pytree_node_class
class Affine:
    """``w`` and ``b`` are children, ``name`` is static data."""

    def __init__(self, w, b, name="affine"):
        self.w, self.b, self.name = w, b, name

    def tree_flatten(self):
        return (self.w, self.b), self.name

    @classmethod
    def tree_unflatten(cls, name, children):
        return cls(*children, name=name)

    def __call__(self, x):
        return self.w * x + self.b


@register_pytree_with_keys_class
class Named:
    """Children with attribute keys, and a faster ``tree_flatten`` without keys."""

    flattened_without_keys = 0

    def __init__(self, first, second):
        self.first, self.second = first, second

    def tree_flatten_with_keys(self):
        return ((GetAttrKey("first"), self.first), (GetAttrKey("second"), self.second)), None

    def tree_flatten(self):
        Named.flattened_without_keys += 1
        return (self.first, self.second), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        return cls(*children)


@register_static
class Mode(str):
    """A static string: no leaves, kept whole in the structure."""


def test_register_pytree_node_class_uses_the_methods_and_returns_the_class():
    assert Affine.__name__ == "Affine" and Affine.tree_flatten  # the decorator returned it
    leaves, treedef = tree_flatten([Affine(1.0, (2.0, None), "a"), 3.0])
    assert leaves == [1.0, 2.0, 3.0]
    rebuilt = tree_unflatten(treedef, [10.0, 20.0, 30.0])
    assert type(rebuilt[0]) is Affine and rebuilt[0].name == "a"
    assert (rebuilt[0].w, rebuilt[0].b, rebuilt[1]) == (10.0, (20.0, None), 30.0)
    # The static data is in the structure.
    assert tree_structure(Affine(1.0, 2.0, "a")) != tree_structure(Affine(1.0, 2.0, "b"))
    assert tree_structure(Affine(1.0, 2.0, "a")) == tree_structure(Affine(5.0, 6.0, "a"))
    # Without keys, key paths use the positions of the children.
    assert [keystr(p) for p, _ in tree_leaves_with_path(Affine(1.0, 2.0))] == [
        "[<flat index 0>]", "[<flat index 1>]"]
    assert is_tree_node(Affine)


def test_register_pytree_node_class_and_subclasses():
    # Registration is by exact type, as in JAX: an unregistered subclass is a leaf.
    class Unregistered(Affine):
        pass
    u = Unregistered(1.0, 2.0)
    assert not is_tree_node(Unregistered)
    assert len(tree_leaves(u)) == 1 and tree_leaves(u)[0] is u

    # A registered subclass is rebuilt as itself (tree_unflatten is bound to it) and its
    # own tree_flatten is used.
    @register_pytree_node_class
    class Shifted(Affine):
        def tree_flatten(self):
            return (self.w,), (self.name, self.b)

        @classmethod
        def tree_unflatten(cls, aux_data, children):
            return cls(children[0], aux_data[1], aux_data[0])

    out = tree_map(lambda v: v * 10, Shifted(1.0, 2.0, "s"))
    assert type(out) is Shifted and (out.w, out.b, out.name) == (10.0, 2.0, "s")

    @register_pytree_node_class
    class Inherits(Affine):
        pass
    out = tree_map(lambda v: v * 10, Inherits(1.0, 2.0, "i"))
    assert type(out) is Inherits and (out.w, out.b, out.name) == (10.0, 20.0, "i")


@pytest.mark.parametrize("make, match", [
    (lambda: type("NoUnflatten", (), {"tree_flatten": lambda self: ((), None)}),
     "register_pytree_node_class: class NoUnflatten has no tree_unflatten"),
    (lambda: type("NoFlatten", (), {"tree_unflatten": classmethod(lambda c, a, ch: c())}),
     "register_pytree_node_class: class NoFlatten has no tree_flatten"),
])
def test_register_pytree_node_class_needs_both_methods(make, match):
    cls = make()
    with pytest.raises(AttributeError, match=match):
        register_pytree_node_class(cls)
    assert not is_tree_node(cls)  # nothing was registered


def test_register_pytree_node_class_refuses_an_instance_and_a_second_registration():
    with pytest.raises(TypeError, match="register_pytree_node_class: expects a class"):
        register_pytree_node_class(Affine(1.0, 2.0))
    with pytest.raises(ValueError, match="Affine is already registered"):
        register_pytree_node_class(Affine)


def test_register_pytree_with_keys_class():
    pairs = tree_leaves_with_path({"n": Named(1, [2])})
    assert [(keystr(p), x) for p, x in pairs] == [("['n'].first", 1), ("['n'].second[0]", 2)]
    before = Named.flattened_without_keys
    assert tree_map(lambda x: x * 10, Named(1, [2])).second == [20]
    assert Named.flattened_without_keys == before + 1  # tree_flatten used where keys aren't
    assert flatten_one_level_with_keys(Named(1, 2)) == (
        ((GetAttrKey("first"), 1), (GetAttrKey("second"), 2)), None)

    @register_pytree_with_keys_class
    class KeysOnly:
        def __init__(self, x):
            self.x = x

        def tree_flatten_with_keys(self):
            return ((DictKey("x"), self.x),), None

        @classmethod
        def tree_unflatten(cls, aux_data, children):
            return cls(*children)

    assert tree_leaves(KeysOnly((1, 2))) == [1, 2]  # flattened through the keyed function
    assert tree_map(lambda v: -v, KeysOnly(3)).x == -3
    with pytest.raises(AttributeError, match="register_pytree_with_keys_class: class "
                                             "NoKeys has no tree_flatten_with_keys"):
        register_pytree_with_keys_class(type("NoKeys", (), {
            "tree_flatten": lambda self: ((), None),
            "tree_unflatten": classmethod(lambda c, a, ch: c())}))


def test_register_static():
    leaves, treedef = tree_flatten([Mode("add"), 1.0, {"m": Mode("sub")}])
    assert leaves == [1.0]
    rebuilt = tree_unflatten(treedef, [2.0])
    assert rebuilt == [Mode("add"), 2.0, {"m": Mode("sub")}]
    assert type(rebuilt[0]) is Mode
    assert tree_structure(Mode("add")) != tree_structure(Mode("sub"))
    assert tree_structure(Mode("add")) == tree_structure(Mode("add"))
    assert tree_leaves_with_path([Mode("x"), 5]) == [((SequenceKey(1),), 5)]
    assert flatten_one_level(Mode("x")) == ((), "x")
    assert tree_map(lambda v: v + 1, (Mode("k"), 1)) == (Mode("k"), 2)
    assert is_tree_node(Mode)


def test_register_static_refuses_unhashable_classes():
    class Unhashable:
        __hash__ = None
    with pytest.raises(TypeError, match="register_static: instances of Unhashable are not "
                                        "hashable"):
        register_static(Unhashable)
    assert not is_tree_node(Unhashable)
    with pytest.raises(TypeError, match="register_static: expects a class"):
        register_static("not a class")


# A class registered with the decorator, as an argument and a result of every transform.

def _loss(p, x):
    return fnp.sum(p(x) ** 2)


def test_registered_class_under_grad():
    p, x = Affine(np.array([1.0, 2.0]), np.array(0.5), "layer"), np.array([3.0, 4.0])
    g = ft.grad(_loss)(p, x)
    assert type(g) is Affine and g.name == "layer"
    r = p.w * x + p.b
    np.testing.assert_allclose(g.w, 2 * r * x)
    np.testing.assert_allclose(g.b, np.sum(2 * r))
    # A result that is a registered class: value_and_grad with has_aux.
    (value, aux), g2 = ft.value_and_grad(lambda p: (_loss(p, x), Affine(p.w, p.b, "aux")),
                                         has_aux=True)(p)
    assert type(aux) is Affine and aux.name == "aux"
    np.testing.assert_allclose(g2.w, g.w)
    # jvp and vjp carry tangents and cotangents of the class's structure.
    _, tangent = ft.jvp(lambda p: p(2.0), (p,), (Affine(np.ones(2), np.array(0.0), "layer"),))
    np.testing.assert_allclose(tangent, [2.0, 2.0])
    _, pullback = ft.vjp(lambda p: Affine(p.w * 3, p.b, p.name), p)
    (ct,) = pullback(Affine(np.ones(2), np.array(1.0), "layer"))
    assert type(ct) is Affine
    np.testing.assert_allclose(ct.w, [3.0, 3.0])


def test_registered_class_under_jit():
    calls = []

    def f(p):
        calls.append(p.name)
        return Affine(p.w * 2, p.b + 1, p.name + "!")

    jf = ft.jit(f)
    out = jf(Affine(np.array([1.0, 2.0]), np.array(0.5), "a"))
    assert type(out) is Affine and out.name == "a!"
    np.testing.assert_allclose(out.w, [2.0, 4.0])
    np.testing.assert_allclose(out.b, 1.5)
    jf(Affine(np.array([3.0, 4.0]), np.array(1.5), "a"))
    assert calls == ["a"]  # same structure: traced once
    jf(Affine(np.array([3.0, 4.0]), np.array(1.5), "b"))
    assert calls == ["a", "b"]  # other static data: traced again


def test_registered_class_under_vmap():
    batch = Affine(np.arange(6.0).reshape(3, 2), np.arange(3.0), "b")
    out = ft.vmap(lambda p: Affine(p.w * 2, p.b, p.name))(batch)
    assert type(out) is Affine and out.name == "b"
    np.testing.assert_allclose(out.w, 2 * batch.w)
    np.testing.assert_allclose(out.b, batch.b)
    # in_axes given as a prefix tree of the class itself: b is shared.
    shared = Affine(np.arange(6.0).reshape(3, 2), np.array(10.0))
    xs = np.ones((3, 2))
    got = ft.vmap(lambda p, x: p(x), in_axes=(Affine(0, None), 0))(shared, xs)
    np.testing.assert_allclose(got, shared.w * xs + 10.0)
    # vmap == loop, under grad.
    grads = ft.vmap(ft.grad(_loss), in_axes=(0, 0))(batch, xs)
    for i in range(3):
        one = ft.grad(_loss)(Affine(batch.w[i], batch.b[i], "b"), xs[i])
        np.testing.assert_allclose(grads.w[i], one.w)
        np.testing.assert_allclose(grads.b[i], one.b)


def test_static_class_under_transforms():
    calls = []

    def f(x, mode):
        calls.append(str(mode))
        return x + 1.0 if mode == "add" else x - 1.0

    jf = ft.jit(f)
    assert (jf(1.0, Mode("add")), jf(1.0, Mode("sub")), jf(5.0, Mode("add"))) == (2.0, 0.0, 6.0)
    assert calls == ["add", "sub"]  # jit specializes on the static value
    assert ft.grad(f)(1.0, Mode("sub")) == 1.0
    np.testing.assert_allclose(ft.vmap(f)(np.ones(3), Mode("sub")), np.zeros(3))
    assert type(ft.jit(lambda m: m)(Mode("q"))) is Mode  # a static result comes back whole


# ------------------------------------------------------------------------------------------
# Nodes one level at a time; treedefs
# ------------------------------------------------------------------------------------------


def test_is_tree_node():
    for node in (tuple, list, dict, OrderedDict, type(None), Point, Box, Affine, Partial):
        assert is_tree_node(node), node
    for leaf in (int, float, np.ndarray, str, type("T", (tuple,), {})):
        assert not is_tree_node(leaf), leaf
    with pytest.raises(TypeError, match=r"is_tree_node: typ must be a type, got a list.*"
                                        r"is_tree_node\(type\(x\)\)"):
        is_tree_node([1])


def test_all_leaves():
    assert all_leaves(tree_leaves({"a": [1, (2, ARRAY)]}))
    assert all_leaves([]) and all_leaves(x for x in (1, 2.0))
    assert not all_leaves([1, (2,)])
    assert not all_leaves([None])  # None is an empty node
    assert not all_leaves([[]])
    assert not all_leaves([Box([1], "k")])
    assert all_leaves([(1,), (2,)], is_leaf=lambda x: isinstance(x, tuple))
    assert all_leaves([None, 1], is_leaf=lambda x: x is None)
    assert not all_leaves([[1]], is_leaf=lambda x: x is None)
    with pytest.raises(TypeError, match="all_leaves: iterable must be iterable"):
        all_leaves(5)


def test_flatten_one_level():
    assert flatten_one_level({"b": [1, 2], "a": 3}) == ((3, [1, 2]), ("a", "b"))
    assert flatten_one_level((1, (2, 3))) == ((1, (2, 3)), None)
    assert flatten_one_level(None) == ((), None)
    children, aux = flatten_one_level(Box([1, [2]], "lbl"))
    assert list(children) == [1, [2]] and aux == "lbl"
    assert list(flatten_one_level(Point(1, 2))[0]) == [1, 2]
    for leaf in (1, ARRAY, "s"):
        with pytest.raises(ValueError, match="flatten_one_level: can't tree-flatten type"):
            flatten_one_level(leaf)


def test_flatten_one_level_with_keys():
    assert flatten_one_level_with_keys({"b": 1, "a": 2}) == (
        ((DictKey("a"), 2), (DictKey("b"), 1)), ("a", "b"))
    keyed, _ = flatten_one_level_with_keys(Point(1, 2))
    assert keyed == ((GetAttrKey("x"), 1), (GetAttrKey("y"), 2))
    keyed, aux = flatten_one_level_with_keys(Box([1, 2], "lbl"))
    assert keyed == ((FlattenedIndexKey(0), 1), (FlattenedIndexKey(1), 2)) and aux == "lbl"
    assert flatten_one_level_with_keys(None) == ((), None)
    with pytest.raises(ValueError, match="flatten_one_level_with_keys: can't tree-flatten"):
        flatten_one_level_with_keys(1.0)


def test_treedef_children_and_tuple():
    x = [(1, 2), 3, {"a": 4}, None]
    children = treedef_children(tree_structure(x))
    assert children == [tree_structure(v) for v in x]
    assert treedef_children(tree_structure(1)) == [] == treedef_children(tree_structure(None))
    xy = treedef_tuple([tree_structure([1, 2]), tree_structure({"a": 1}), tree_structure(None)])
    assert xy == tree_structure(([1, 2], {"a": 1}, None))
    assert hash(xy) == hash(tree_structure(([0, 0], {"a": 0}, None)))
    assert tree_unflatten(xy, [1, 2, 3]) == ([1, 2], {"a": 3}, None)
    assert treedef_tuple([]) == tree_structure(())
    assert treedef_tuple(iter([tree_structure(1)])) == tree_structure((1,))
    assert treedef_children(treedef_tuple(children)) == children
    with pytest.raises(TypeError, match="treedef_children: treedef must be a PyTreeDef"):
        treedef_children((1,))
    with pytest.raises(TypeError, match=r"treedef_tuple: treedefs\[1\] is int"):
        treedef_tuple([tree_structure(1), 1])
    with pytest.raises(TypeError, match="treedef_tuple: treedefs must be an iterable"):
        treedef_tuple(tree_structure(1))


# ------------------------------------------------------------------------------------------
# tree_transpose, tree_broadcast, tree_reduce_associative (functrans.tree calls these)
# ------------------------------------------------------------------------------------------


def test_tree_transpose():
    outer, inner = tree_structure([0, 0]), tree_structure((0, 0))
    assert tree_transpose(outer, inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert tree_transpose(outer, None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert tree_transpose(outer, tree_structure((0, None)), [(1, None), (3, None)]) == (
        [1, 3], None)
    assert tree_transpose(tree_structure(0), inner, (1, 2)) == (1, 2)
    assert tree_transpose(outer, tree_structure(()), [(), ()]) == ()
    assert tree_transpose(tree_structure([]), inner, []) == ([], [])
    p = tree_transpose(tree_structure(Affine(0, 0, "t")), inner, Affine((1, 2), (3, 4), "t"))
    assert [type(a) for a in p] == [Affine, Affine] and (p[0].w, p[0].b, p[1].w) == (1, 3, 2)


@pytest.mark.parametrize("tree, match", [
    ([(1, 2), (3, 4, 5)],
     r"tree_transpose: inner tree 1 does not have the structure PyTreeDef\(\(\*, \*\)\)"),
    ([(1, 2), [3, 4]], r"tree_transpose: inner tree 1 does not have the structure .*"
                       r"expected a tuple, got list"),
    (((1, 2), (3, 4)), r"tree_transpose: pytree_to_transpose does not have the outer "
                       r"structure PyTreeDef\(\[\*, \*\]\).*expected a list, got tuple"),
    ([(1, 2)], r"tree_transpose: pytree_to_transpose does not have the outer structure"),
    ([{"a": 1, "b": 2}, {"a": 3, "c": 4}], "tree_transpose: inner tree 1"),
])
def test_tree_transpose_names_the_mismatch(tree, match):
    outer = tree_structure([0, 0])
    inner = tree_structure({"a": 0, "b": 0}) if isinstance(tree[0], dict) else tree_structure(
        (0, 0))
    with pytest.raises(ValueError, match=match):
        tree_transpose(outer, inner, tree)


def test_tree_transpose_bad_arguments():
    with pytest.raises(ValueError, match="tree_transpose: inner_treedef=None needs at least"):
        tree_transpose(tree_structure([]), None, [])
    with pytest.raises(TypeError, match="tree_transpose: outer_treedef must be a PyTreeDef"):
        tree_transpose([0, 0], None, [1, 2])


def test_tree_broadcast():
    assert tree_broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))) == (
        1, {"a": 2, "b": 2}, (3, 3))
    assert tree_broadcast((1, None), (0, None)) == (1, None)
    assert tree_broadcast((1, 2), (0, None)) == (1, None)  # a leaf over an empty subtree
    assert tree_broadcast(7, Affine(0, [0, 0], "z")).b == [7, 7]
    is_tuple = lambda x: isinstance(x, tuple)  # noqa: E731
    assert tree_broadcast([(1, 2)], [[0, 0]], is_leaf=is_tuple) == [[(1, 2), (1, 2)]]
    assert tree_broadcast([9], [(0, 0)], is_leaf=is_tuple) == [(9, 9)]  # full: no is_leaf
    with pytest.raises(ValueError, match=r"tree_broadcast: prefix_tree \(structure "
                                         r"PyTreeDef\(\(\*, \*\)\)\) is not a prefix of "
                                         r"full_tree"):
        tree_broadcast((1, 2), (0, 1, 2))
    with pytest.raises(ValueError, match="tree_broadcast: .*expected a NoneType, got tuple"):
        tree_broadcast((1, None), (0, (1, 2)))


def test_tree_reduce_associative():
    pair = lambda a, b: (a, b)  # noqa: E731
    assert tree_reduce_associative(pair, [1, 2, 3, 4, 5]) == ((1, 2), (3, (4, 5)))
    assert tree_reduce_associative(pair, {"x": 9}) == 9
    assert tree_reduce_associative(lambda a, b: a + b, [5], identity=0) == 5
    assert tree_reduce_associative(lambda a, b: a + b, {}, identity=0) == 0
    assert tree_reduce_associative(pair, [(1, 2), (3, 4)],
                                   is_leaf=lambda x: isinstance(x, tuple)) == ((1, 2), (3, 4))
    with pytest.raises(TypeError, match="tree_reduce_associative: the tree has no leaves"):
        tree_reduce_associative(pair, [None])
    with pytest.raises(TypeError):
        tree_reduce_associative(pair, [1], 0)  # identity is keyword-only, as in JAX


# ------------------------------------------------------------------------------------------
# Against JAX
# ------------------------------------------------------------------------------------------

NEW_NAMES = ["all_leaves", "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
             "register_pytree_node_class", "register_pytree_with_keys_class",
             "register_static", "tree_broadcast", "tree_reduce_associative", "tree_transpose",
             "treedef_children", "treedef_tuple"]


@pytest.mark.parametrize("name", NEW_NAMES)
def test_signature_and_export_match_jax(name):
    jtu = pytest.importorskip("jax.tree_util")
    ours = getattr(tree_util, name)
    assert name in tree_util.__all__
    want = [(p.name, p.kind) for p in inspect.signature(getattr(jtu, name)).parameters.values()]
    assert [(p.name, p.kind) for p in inspect.signature(ours).parameters.values()] == want


def test_functrans_tree_has_every_name_of_jax_tree():
    jax_tree = pytest.importorskip("jax.tree")
    import functrans.tree as ft_tree
    public = {n for n in dir(jax_tree) if not n.startswith("_")}
    assert public <= set(dir(ft_tree))


TREES = [{"b": (1, 2), "a": [3, None]}, [None, (), {}], Point(1, (2, 3)), (1,), 5, None,
         [[1], [2, (3, None)]]]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_one_level_and_treedefs_match_jax(tree):
    jtu = pytest.importorskip("jax.tree_util")
    ours = tree_structure(tree)
    theirs = jtu.tree_structure(tree)
    children = list(jtu.flatten_one_level(tree)[0]) if jtu.is_tree_node(type(tree)) else []
    assert treedef_children(ours) == [tree_structure(c) for c in children]
    assert jtu.treedef_children(theirs) == [jtu.tree_structure(c) for c in children]
    assert treedef_tuple([ours, ours]) == tree_structure((tree, tree))
    assert jtu.treedef_tuple([theirs, theirs]) == jtu.tree_structure((tree, tree))
    assert is_tree_node(type(tree)) == jtu.is_tree_node(type(tree))
    if is_tree_node(type(tree)):
        ours_children, _ = flatten_one_level(tree)
        theirs_children, _ = jtu.flatten_one_level(tree)
        assert list(ours_children) == list(theirs_children)
    items = list(tree) if isinstance(tree, (list, tuple)) else [tree]
    assert all_leaves(items) == jtu.all_leaves(items)


def test_transpose_broadcast_reduce_match_jax():
    jtu = pytest.importorskip("jax.tree_util")
    rows = [{"a": i, "b": (10 * i, None)} for i in range(3)]
    outer, inner = tree_structure([0, 0, 0]), tree_structure({"a": 0, "b": (0, None)})
    want = jtu.tree_transpose(jtu.tree_structure([0, 0, 0]),
                              jtu.tree_structure({"a": 0, "b": (0, None)}), rows)
    assert tree_transpose(outer, inner, rows) == want
    assert tree_transpose(outer, None, rows) == want
    is_tuple = lambda x: isinstance(x, tuple)  # noqa: E731
    for args, kw in [(((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))), {}),
                     (((1, 2), (0, None)), {}),
                     (([1, 2], [Point(0, 0), [0, 0]]), {"is_leaf": is_tuple}),
                     (([(1, 2)], [[0, 0]]), {"is_leaf": is_tuple})]:
        assert tree_broadcast(*args, **kw) == jtu.tree_broadcast(*args, **kw)
    pair = lambda a, b: (a, b)  # noqa: E731
    for n in range(1, 9):
        assert tree_reduce_associative(pair, list(range(n))) == jtu.tree_reduce_associative(
            pair, list(range(n)))


NESTED = {"a": [Box([1], "y"), (2, 3)]}


@pytest.mark.parametrize("other, match", [
    ({"a": [Box([1], "y"), (2, 3, 4)]},
     r"at key path \['a'\]\[1\]: expected a tuple with 2 children, got 3"),
    ({"a": [Box([1], "y"), [2, 3]]}, r"at key path \['a'\]\[1\]: expected a tuple, got list"),
    ({"b": [Box([1], "y"), (2, 3)]},
     r"at the root: expected a dict with keys \('a',\), got \('b',\)"),
    ({"a": [Box([1], "x"), (2, 3)]},
     r"at key path \['a'\]\[0\]: expected a Box with static data 'y', got 'x'"),
])
def test_structure_errors_say_where(other, match):
    with pytest.raises(ValueError, match=match):
        tree_map(lambda x, y: x, NESTED, other)
