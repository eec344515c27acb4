"""``functrans.tree``: JAX's ``jax.tree`` module, short names for the functions of
``functrans.tree_util``.

>>> import functrans.tree as tree
>>> tree.map(lambda x: x * 10, {"a": 1, "b": (2, 3)})
{'a': 10, 'b': (20, 30)}
>>> tree.leaves([1, (2, None), {"c": 3}])
[1, 2, 3]
>>> tree.map_with_path(lambda path, x: f"{tree_util.keystr(path)}: {x}", {"a": [1]})
{'a': ["['a'][0]: 1"]}
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from functrans import tree_util
from functrans.tree_util import PyTreeDef

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]

_NO_INITIALIZER = object()


def map(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None) -> Any:  # noqa: A001
    """``f`` applied to each leaf of ``tree`` and the matching leaves of ``rest``.

    >>> map(lambda x, y: x + y, [1, 2], [10, 20])
    [11, 22]
    """
    return tree_util.tree_map(f, tree, *rest, is_leaf=is_leaf)


def leaves(tree: Any, is_leaf: Callable | None = None) -> list:
    """The leaves of ``tree``, left to right (dict entries in key order).

    >>> leaves({"b": 2, "a": (1, None)})
    [1, 2]
    """
    return tree_util.tree_leaves(tree, is_leaf)


def flatten(tree: Any, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """The leaves of ``tree`` and its structure.

    >>> flatten((1, [2]))
    ([1, 2], PyTreeDef((*, [*])))
    """
    return tree_util.tree_flatten(tree, is_leaf)


def unflatten(treedef: PyTreeDef, leaves: Any) -> Any:
    """The tree of structure ``treedef`` with ``leaves``.

    >>> unflatten(structure((1, [2])), ["a", "b"])
    ('a', ['b'])
    """
    return tree_util.tree_unflatten(treedef, leaves)


def structure(tree: Any, is_leaf: Callable | None = None) -> PyTreeDef:
    """The structure of ``tree`` (its leaves replaced by ``*``).

    >>> structure({"a": 1, "b": None})
    PyTreeDef({'a': *, 'b': None})
    """
    return tree_util.tree_structure(tree, is_leaf)


def reduce(function: Callable, tree: Any, initializer: Any = _NO_INITIALIZER,
           is_leaf: Callable | None = None) -> Any:
    """``function`` folded over the leaves of ``tree``, left to right, as ``functools.reduce``.

    >>> reduce(lambda a, b: a + b, {"x": 1, "y": [2, 3]})
    6
    >>> reduce(max, [], initializer=0)
    0
    """
    if initializer is _NO_INITIALIZER:
        return tree_util.tree_reduce(function, tree, is_leaf=is_leaf)
    return tree_util.tree_reduce(function, tree, initializer, is_leaf)


def all(tree: Any, *, is_leaf: Callable | None = None) -> bool:  # noqa: A001
    """Whether every leaf of ``tree`` is truthy (``True`` for a tree without leaves).

    >>> all([True, {"a": 1}]), all((True, 0))
    (True, False)
    """
    return tree_util.tree_all(tree, is_leaf=is_leaf)


def map_with_path(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None,
                  is_leaf_takes_path: bool = False) -> Any:
    """``f(path, leaf, *others)`` for each leaf of ``tree`` (``path``: a tuple of keys, see
    :func:`functrans.tree_util.keystr`) and the matching leaves of ``rest``.

    >>> map_with_path(lambda p, x: x * 10 if p[0].key == "w" else x, {"w": 1, "b": 2})
    {'b': 2, 'w': 10}
    """
    return tree_util.tree_map_with_path(f, tree, *rest, is_leaf=is_leaf,
                                        is_leaf_takes_path=is_leaf_takes_path)


def flatten_with_path(tree: Any, is_leaf: Callable | None = None,
                      is_leaf_takes_path: bool = False) -> tuple[list, PyTreeDef]:
    """The ``(key path, leaf)`` pairs of ``tree`` and its structure.

    >>> flatten_with_path([5])
    ([((SequenceKey(idx=0),), 5)], PyTreeDef([*]))
    """
    return tree_util.tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)


def leaves_with_path(tree: Any, is_leaf: Callable | None = None,
                     is_leaf_takes_path: bool = False) -> list:
    """The ``(key path, leaf)`` pairs of ``tree``.

    >>> [(tree_util.keystr(p), x) for p, x in leaves_with_path({"a": (1, 2)})]
    [("['a'][0]", 1), ("['a'][1]", 2)]
    """
    return tree_util.tree_leaves_with_path(tree, is_leaf, is_leaf_takes_path)


def transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
              pytree_to_transpose: Any) -> Any:
    """Turn a tree of structure ``outer`` whose leaves are trees of structure ``inner``
    into a tree of structure ``inner`` whose leaves are trees of structure ``outer``;
    ``inner_treedef=None`` takes the structure of the first inner tree.

    >>> outer, inner = structure([0, 0]), structure({"a": 0, "b": 0})
    >>> transpose(outer, inner, [{"a": 1, "b": 2}, {"a": 3, "b": 4}])
    {'a': [1, 3], 'b': [2, 4]}
    """
    return tree_util.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def broadcast(prefix_tree: Any, full_tree: Any, is_leaf: Callable | None = None) -> Any:
    """A tree of ``full_tree``'s structure in which each leaf of ``prefix_tree`` (a tree
    prefix of ``full_tree``) is repeated over every leaf of the matching subtree.

    >>> broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0)))
    (1, {'a': 2, 'b': 2}, (3, 3))
    """
    return tree_util.tree_broadcast(prefix_tree, full_tree, is_leaf)


def reduce_associative(operation: Callable, tree: Any, *, identity: Any = _NO_INITIALIZER,
                       is_leaf: Callable | None = None) -> Any:
    """``operation`` (assumed associative) applied over the leaves of ``tree`` as a
    balanced binary tree, as JAX does: the halves of the leaf list are reduced separately
    and then combined, so the depth of nesting is logarithmic.  ``identity`` is returned for
    a tree without leaves (a TypeError without it).

    >>> reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5])
    ((1, 2), (3, (4, 5)))
    >>> reduce_associative(lambda a, b: a + b, {}, identity=0)
    0
    """
    if identity is _NO_INITIALIZER:
        return tree_util.tree_reduce_associative(operation, tree, is_leaf=is_leaf)
    return tree_util.tree_reduce_associative(operation, tree, identity=identity,
                                             is_leaf=is_leaf)


def static(**kwargs: Any) -> Any:
    """A :func:`dataclasses.field` marked static (``metadata={"static": True}``), so that
    :func:`functrans.tree_util.register_dataclass` keeps the field in the tree's structure
    instead of among its leaves.  Takes the arguments of :func:`dataclasses.field`.

    >>> from dataclasses import dataclass
    >>> @tree_util.register_dataclass
    ... @dataclass
    ... class Layer:
    ...     w: float
    ...     kind: str = static(default="dense")
    ...
    >>> leaves(Layer(2.0))
    [2.0]
    >>> unflatten(structure(Layer(2.0, "conv")), [5.0])
    Layer(w=5.0, kind='conv')
    """
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


def __dir__() -> list[str]:
    return sorted(__all__)
