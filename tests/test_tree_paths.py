"""Tests for key paths in functrans.tree_util (and functrans.tree): the keys of every node
kind, keystr, the *_with_path functions, register_pytree_with_keys, register_dataclass,
Partial, tree_reduce and tree_all."""
from __future__ import annotations

import dataclasses
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.tree as tree
from functrans.tree_util import (DictKey, FlattenedIndexKey, GetAttrKey, Partial, SequenceKey,
                                 keystr, register_dataclass, register_pytree_node,
                                 register_pytree_with_keys, tree_all, tree_flatten,
                                 tree_flatten_with_path, tree_leaves, tree_leaves_with_path,
                                 tree_map, tree_map_with_path, tree_reduce, tree_structure)

Point = namedtuple("Point", ["x", "y"])


class Bag:
    """A node registered without keys: its children get FlattenedIndexKey."""

    def __init__(self, *items):
        self.items = items


register_pytree_node(Bag, lambda b: (b.items, None), lambda _, xs: Bag(*xs))


class Named:
    """A node registered with keys of its own choosing."""

    def __init__(self, **parts):
        self.parts = parts


register_pytree_with_keys(
    Named, lambda n: (tuple((DictKey(k), n.parts[k]) for k in sorted(n.parts)),
                      tuple(sorted(n.parts))),
    lambda keys, xs: Named(**dict(zip(keys, xs))))


TREE = {"b": [1, (2, None)], "a": Point(3, 4),
        "c": OrderedDict([("z", 5), ("y", 6)]), "d": Bag(7, [8]), "e": Named(q=9)}
# What JAX 0.10 gives for the same tree (checked by experiment).
EXPECTED = [
    ((DictKey("a"), GetAttrKey("x")), 3),
    ((DictKey("a"), GetAttrKey("y")), 4),
    ((DictKey("b"), SequenceKey(0)), 1),
    ((DictKey("b"), SequenceKey(1), SequenceKey(0)), 2),
    ((DictKey("c"), DictKey("z")), 5),
    ((DictKey("c"), DictKey("y")), 6),
    ((DictKey("d"), FlattenedIndexKey(0)), 7),
    ((DictKey("d"), FlattenedIndexKey(1), SequenceKey(0)), 8),
    ((DictKey("e"), DictKey("q")), 9),
]


def test_paths_of_every_node_kind():
    pairs, treedef = tree_flatten_with_path(TREE)
    assert pairs == EXPECTED
    assert treedef == tree_structure(TREE)
    assert [leaf for _, leaf in pairs] == tree_leaves(TREE)
    assert tree_leaves_with_path(TREE) == EXPECTED
    assert tree.leaves_with_path(TREE) == EXPECTED
    assert tree.flatten_with_path(TREE) == (EXPECTED, treedef)


def test_leaf_and_empty_trees():
    assert tree_flatten_with_path(5) == ([((), 5)], tree_structure(5))
    assert tree_flatten_with_path(None)[0] == []
    assert tree_flatten_with_path({"a": (), "b": []})[0] == []


def test_keys_compare_by_type_and_value():
    assert SequenceKey(0) == SequenceKey(0) and hash(DictKey("a")) == hash(DictKey("a"))
    assert SequenceKey(0) != FlattenedIndexKey(0)
    assert repr(GetAttrKey("w")) == "GetAttrKey(name='w')"
    assert {DictKey("a"): 1}[DictKey("a")] == 1


def test_keystr():
    path = (DictKey("a"), SequenceKey(0), GetAttrKey("x"), FlattenedIndexKey(2))
    assert keystr(path) == "['a'][0].x[<flat index 2>]"
    assert keystr(path, simple=True, separator="/") == "a/0/x/2"
    assert keystr((DictKey(1), DictKey("k")), simple=True) == "1k"
    assert keystr(()) == ""


def test_map_with_path_and_other_trees():
    out = tree_map_with_path(lambda p, x, y: (keystr(p), x + y), [1, {"k": 2}], [10, {"k": 20}])
    assert out == [("[0]", 11), {"k": ("[1]['k']", 22)}]
    # `rest` may have the first tree's structure as a prefix: whole subtrees are passed.
    out = tree.map_with_path(lambda p, x, sub: (len(p), sub), [1, 2], [(3, 4), {"a": 5}])
    assert out == [(1, (3, 4)), (1, {"a": 5})]
    with pytest.raises(ValueError, match="tree_map_with_path: tree structures differ"):
        tree_map_with_path(lambda p, x, y: x, [1, 2], [1, 2, 3])


def test_is_leaf_with_and_without_path():
    stop_at_dicts = lambda x: isinstance(x, dict)  # noqa: E731
    assert tree_leaves_with_path([1, {"a": 2}], is_leaf=stop_at_dicts) == [
        ((SequenceKey(0),), 1), ((SequenceKey(1),), {"a": 2})]
    pairs, treedef = tree_flatten_with_path(
        {"keep": [1, 2], "open": [3]}, is_leaf=lambda p, x: p == (DictKey("keep"),),
        is_leaf_takes_path=True)
    assert pairs == [((DictKey("keep"),), [1, 2]), ((DictKey("open"), SequenceKey(0)), 3)]
    assert treedef.unflatten(["K", "O"]) == {"keep": "K", "open": ["O"]}
    doubled = tree_map_with_path(lambda p, x: x * 2, {"a": [1, 2]},
                                 is_leaf=lambda p, x: len(p) == 1, is_leaf_takes_path=True)
    assert doubled == {"a": [1, 2, 1, 2]}


def test_deep_tree_needs_no_recursion():
    deep = 0
    for _ in range(5000):
        deep = [deep]
    (path, leaf), = tree_leaves_with_path(deep)
    assert leaf == 0 and len(path) == 5000 and set(path) == {SequenceKey(0)}


def test_user_node_with_keys_round_trips():
    pairs, treedef = tree_flatten_with_path(Named(b=1, a=[2]))
    assert pairs == [((DictKey("a"), SequenceKey(0)), 2), ((DictKey("b"),), 1)]
    rebuilt = treedef.unflatten([20, 10])
    assert rebuilt.parts == {"a": [20], "b": 10}
    # Without a flatten_func the plain flatten is derived from flatten_with_keys.
    assert tree_leaves(Named(b=1, a=[2])) == [2, 1]


@register_dataclass
@dataclasses.dataclass
class Layer:
    w: object
    b: object
    name: str = dataclasses.field(default="dense", metadata=dict(static=True))


@dataclasses.dataclass
class Explicit:
    x: object
    kind: str
    cache: object = None


register_dataclass(Explicit, data_fields=["x"], meta_fields=["kind"], drop_fields=["cache"])


def test_register_dataclass_decorator_form():
    layer = Layer(np.ones(2), 0.5, name="out")
    pairs, treedef = tree_flatten_with_path(layer)
    assert [keystr(p) for p, _ in pairs] == [".w", ".b"]
    assert treedef != tree_structure(Layer(np.ones(2), 0.5))  # static data is in the structure
    rebuilt = treedef.unflatten([1, 2])
    assert rebuilt == Layer(1, 2, name="out")
    grads = ft.grad(lambda l: fnp.sum(l.w * l.b))(layer)
    assert isinstance(grads, Layer) and grads.name == "out"
    np.testing.assert_allclose(grads.w, [0.5, 0.5])
    np.testing.assert_allclose(grads.b, 2.0)


def test_register_dataclass_explicit_fields():
    leaves, treedef = tree_flatten(Explicit(3, "k", cache="ignored"))
    assert leaves == [3]
    assert treedef.unflatten([4]) == Explicit(4, "k")  # dropped fields take their defaults


def test_register_dataclass_errors():
    @dataclasses.dataclass
    class Two:
        a: int
        b: int

    with pytest.raises(ValueError, match=r"missing \['b'\]"):
        register_dataclass(Two, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match=r"unexpected \['c'\]"):
        register_dataclass(Two, data_fields=["a", "b", "c"], meta_fields=[])
    with pytest.raises(ValueError, match="in both"):
        register_dataclass(Two, data_fields=["a", "b"], meta_fields=["a"])
    with pytest.raises(TypeError, match="both data_fields and meta_fields"):
        register_dataclass(Two, data_fields=["a", "b"])
    with pytest.raises(TypeError, match="not a dataclass"):
        register_dataclass(Bag)
    # A plain class works with explicit fields (rebuilt through its keyword constructor).

    class Plain:
        def __init__(self, v, tag):
            self.v, self.tag = v, tag

    register_dataclass(Plain, data_fields=["v"], meta_fields=["tag"])
    rebuilt = tree_map(lambda v: v + 1, Plain(1, "t"))
    assert (rebuilt.v, rebuilt.tag) == (2, "t")


def test_partial_is_a_pytree():
    scale = Partial(lambda a, x, power=1.0: a * x ** power, np.array(3.0), power=2.0)
    leaves, treedef = tree_flatten(scale)
    assert leaves == [3.0, 2.0]  # keyword values are leaves too
    assert [keystr(p) for p, _ in tree_leaves_with_path(scale)] == [
        "[<flat index 0>][0]", "[<flat index 1>]['power']"]
    assert scale(2.0) == 12.0
    # Derivatives and vmap go through the bound array.
    g = ft.grad(lambda s: s(2.0))(scale)
    assert isinstance(g, Partial) and g.func is scale.func
    np.testing.assert_allclose(g.args[0], 4.0)
    np.testing.assert_allclose(g.keywords["power"], 12.0 * np.log(2.0))
    batched = ft.vmap(lambda s: s(2.0))(Partial(scale.func, np.arange(3.0), power=np.ones(3)))
    np.testing.assert_allclose(batched, [0.0, 2.0, 4.0])
    # A Partial of a Partial is merged, so the inner arguments stay leaves.
    outer = Partial(Partial(lambda a, b, c: a + b + c, 1), 2)
    assert tree_leaves(outer) == [1, 2] and outer(3) == 6


def test_reduce_and_all():
    assert tree_reduce(lambda a, b: a * b, {"a": 2, "b": [3, 4]}) == 24
    assert tree_reduce(lambda a, b: a + b, [], 7) == 7
    with pytest.raises(TypeError, match="initializer"):
        tree_reduce(lambda a, b: a + b, [None])
    assert tree_reduce(lambda a, b: a + [b], [[1], [2]], [], is_leaf=lambda x: x == [2]) == [
        1, [2]]
    assert tree_all({"a": True, "b": [1, None]}) and not tree_all([1, 0])
    assert tree_all([[]], is_leaf=lambda x: x == []) is False
    assert tree.reduce(max, [], initializer=-1) == -1 and tree.all(())


def test_agrees_with_jax_when_installed():
    jtu = pytest.importorskip("jax.tree_util")
    names = {"SequenceKey": "idx", "DictKey": "key", "GetAttrKey": "name",
             "FlattenedIndexKey": "key"}

    def ours(path):
        return tuple((type(k).__name__, getattr(k, names[type(k).__name__])) for k in path)

    jtu.register_pytree_node(Bag, lambda b: (b.items, None), lambda _, xs: Bag(*xs))
    plain = {k: v for k, v in TREE.items() if k != "e"}
    theirs = [(tuple((type(k).__name__, getattr(k, names[type(k).__name__])) for k in p), x)
              for p, x in jtu.tree_flatten_with_path(plain)[0]]
    assert [(ours(p), x) for p, x in tree_flatten_with_path(plain)[0]] == theirs
    assert [keystr(p) for p, _ in tree_leaves_with_path(plain)] == [
        jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path(plain)]
