"""Pytrees: nested containers (tuples, lists, dicts, namedtuples, None and registered
classes) whose leaves are arrays.  Transforms flatten their arguments and results with these.

>>> from functrans.tree_util import tree_flatten, tree_unflatten
>>> leaves, treedef = tree_flatten({"b": (1, 2), "a": [3, None]})
>>> leaves
[3, 1, 2]
>>> tree_unflatten(treedef, [30, 10, 20])
{'a': [30, None], 'b': (10, 20)}
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterable, NamedTuple

__all__ = [
    "PyTreeDef", "register_pytree_node", "tree_flatten", "tree_unflatten", "tree_map",
    "tree_leaves", "tree_structure", "treedef_is_leaf", "tree_all",
]


class _NodeType(NamedTuple):
    to_iterable: Callable[[Any], tuple[Iterable, Hashable]]
    from_iterable: Callable[[Hashable, Iterable], Any]


_registry: dict[type, _NodeType] = {}


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable
                         ) -> None:
    """Make ``nodetype`` a pytree node.

    ``flatten_func(x) -> (children, aux_data)``: the children (an iterable) and hashable
    static data; ``unflatten_func(aux_data, children) -> x`` rebuilds the node.
    """
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func)


register_pytree_node(tuple, lambda t: (t, None), lambda _, xs: tuple(xs))
register_pytree_node(list, lambda t: (t, None), lambda _, xs: list(xs))
register_pytree_node(
    dict, lambda d: (tuple(d[k] for k in sorted(d)), tuple(sorted(d))),
    lambda keys, xs: dict(zip(keys, xs)))
register_pytree_node(
    OrderedDict, lambda d: (tuple(d.values()), tuple(d)),
    lambda keys, xs: OrderedDict(zip(keys, xs)))
register_pytree_node(type(None), lambda _: ((), None), lambda _, __: None)


def _node_type(x):
    t = type(x)
    node = _registry.get(t)
    if node is None and isinstance(x, tuple) and hasattr(t, "_fields"):
        return t, _NodeType(lambda nt: (tuple(nt), None), lambda _, xs, t=t: t(*xs))
    return t, node


class PyTreeDef:
    """The structure of a pytree: node types, static data and the positions of leaves."""

    __slots__ = ("node_type", "node_data", "children", "num_leaves")

    def __init__(self, node_type, node_data, children: tuple):
        self.node_type = node_type
        self.node_data = node_data
        self.children = children
        self.num_leaves = 1 if node_type is None else sum(c.num_leaves for c in children)

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children)

    def _key(self):
        return (self.node_type, self.node_data, self.children)

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def unflatten(self, leaves: Iterable) -> Any:
        return tree_unflatten(self, leaves)

    def __repr__(self):
        return f"PyTreeDef({self._pp()})"

    def _pp(self) -> str:
        if self.node_type is None:
            return "*"
        inner = ", ".join(c._pp() for c in self.children)
        if self.node_type is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.node_type is list:
            return f"[{inner}]"
        if self.node_type is dict:
            return "{" + ", ".join(f"{k!r}: {c._pp()}" for k, c in
                                   zip(self.node_data, self.children)) + "}"
        if self.node_type is type(None):
            return "None"
        return f"{self.node_type.__name__}({inner})"


_LEAF = PyTreeDef(None, None, ())


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list, PyTreeDef]:
    """The leaves of ``tree`` (left to right; dict keys sorted) and its structure."""
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _flatten(tree, leaves: list, is_leaf) -> PyTreeDef:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF
    node_type, node = _node_type(tree)
    if node is None:
        leaves.append(tree)
        return _LEAF
    children, data = node.to_iterable(tree)
    return PyTreeDef(node_type, data, tuple(_flatten(c, leaves, is_leaf) for c in children))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """Rebuild a pytree of structure ``treedef`` from its leaves."""
    leaves_iter = iter(leaves)
    tree = _unflatten(treedef, leaves_iter)
    if next(leaves_iter, _sentinel) is not _sentinel:
        raise ValueError(f"tree_unflatten: too many leaves for {treedef}")
    return tree


_sentinel = object()


def _unflatten(treedef: PyTreeDef, leaves) -> Any:
    if treedef.node_type is None:
        leaf = next(leaves, _sentinel)
        if leaf is _sentinel:
            raise ValueError("tree_unflatten: too few leaves for the tree structure")
        return leaf
    node = _registry.get(treedef.node_type) or _node_type_for_namedtuple(treedef.node_type)
    return node.from_iterable(treedef.node_data, [_unflatten(c, leaves) for c in treedef.children])


def _node_type_for_namedtuple(t: type) -> _NodeType:
    return _NodeType(lambda nt: (tuple(nt), None), lambda _, xs: t(*xs))


def tree_leaves(tree: Any, is_leaf=None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf=None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.node_type is None


def tree_map(f: Callable, tree: Any, *rest: Any, is_leaf=None) -> Any:
    """Apply ``f`` to the leaves of ``tree`` (and the matching subtrees of ``rest``, each of
    which has ``tree``'s structure or has it as a prefix, as in JAX).

    >>> tree_map(lambda x, y: x + y, (1, {"a": 2}), (10, {"a": 20}))
    (11, {'a': 22})
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        try:
            others.append(flatten_up_to(treedef, r))
        except ValueError as e:
            raise ValueError(f"tree_map: tree structures differ: {treedef} is not a prefix of "
                             f"{tree_structure(r)} ({e})") from None
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def tree_all(tree: Any) -> bool:
    return all(tree_leaves(tree))


def flatten_up_to(prefix: PyTreeDef, tree: Any) -> list:
    """Flatten ``tree`` down to the leaves of ``prefix`` (a structure that is a prefix of
    ``tree``'s), returning one subtree per prefix leaf; ValueError if it is not a prefix."""
    out: list = []
    _flatten_up_to(prefix, tree, out)
    return out


def _flatten_up_to(prefix: PyTreeDef, tree, out: list) -> None:
    if prefix.node_type is None:
        out.append(tree)
        return
    node_type, node = _node_type(tree)
    if node_type is not prefix.node_type:
        raise ValueError(f"expected a {prefix.node_type.__name__}, got {type(tree).__name__}")
    children, data = node.to_iterable(tree)
    children = tuple(children)
    if data != prefix.node_data or len(children) != len(prefix.children):
        raise ValueError(f"structure {prefix} does not match {tree_structure(tree)}")
    for p, c in zip(prefix.children, children):
        _flatten_up_to(p, c, out)


def __dir__() -> list[str]:
    return sorted(__all__)
